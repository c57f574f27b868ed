export declare const schemaFile: string;
export declare function sdkSchemaSource(document: unknown): Promise<string>;
