import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** The OTLP/HTTP JSON a collector receives (the fields the tests read). */
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
}
export interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}
/** One received span with its resource and instrumentation scope. */
export interface CollectedSpan extends OtlpSpan {
  resource: OtlpAttribute[];
  service: string;
  scope: string;
}

export const attributeValue = (attributes: OtlpAttribute[], key: string) => {
  const value = attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined);
};

export interface OtlpCollector {
  /** For OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
  endpoint: string;
  /** Every export request's body, as received. */
  exports: OtlpExport[];
  spans(): CollectedSpan[];
  close(): Promise<void>;
}

/** A trace collector on loopback speaking OTLP/HTTP with JSON bodies. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const exports: OtlpExport[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      exports.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpExport);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    exports,
    spans: () =>
      exports.flatMap((e) =>
        e.resourceSpans.flatMap((r) =>
          r.scopeSpans.flatMap((s) =>
            s.spans.map((span) => ({
              ...span,
              resource: r.resource.attributes,
              service: String(attributeValue(r.resource.attributes, "service.name")),
              scope: s.scope.name,
            })),
          ),
        ),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
