import { z } from "zod";

export type JsonSchema = Record<string, unknown>;

export interface SchemaRegistry {
  /** `components.schemas` of the document. */
  components: Record<string, JsonSchema>;
  /** JSON Schema 2020-12 for a zod schema; schemas with an `id` become component references. */
  toSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema;
}

/** Points zod's `#/$defs/<id>` at `#/components/schemas/<id><suffix>`. */
function rewriteRefs(value: unknown, suffix: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, suffix));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")
        ? `#/components/schemas/${inner.slice("#/$defs/".length)}${suffix}`
        : rewriteRefs(inner, suffix),
    ]),
  );
}

/**
 * Converts the route table's zod schemas into one set of components. zod lifts every schema
 * with an `id` (the root included) into `$defs`; here they live in `components.schemas`.
 * Output schemas keep their id; the input variant of a nested id'd schema (defaults make fields
 * optional) is registered as `<id>Input` so the two never overwrite each other.
 */
export function schemaRegistry(): SchemaRegistry {
  const components: Record<string, JsonSchema> = {};
  const toSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const suffix = io === "input" ? "Input" : "";
    const converted = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      reused: "inline",
    }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const { $defs = {}, $schema: _ignored, ...root } = converted;
    const id = (schema.meta() as { id?: string } | undefined)?.id;
    const lifted = id !== undefined && root.$ref === `#/$defs/${id}` && $defs[id] !== undefined;
    const body = lifted ? ($defs[id] as JsonSchema) : root;
    for (const [defId, def] of Object.entries($defs)) {
      if (lifted && defId === id) continue;
      components[`${defId}${suffix}`] = rewriteRefs(def, suffix) as JsonSchema;
    }
    if (id !== undefined && io === "output") {
      components[id] = rewriteRefs(body, suffix) as JsonSchema;
      return { $ref: `#/components/schemas/${id}` };
    }
    return rewriteRefs(body, suffix) as JsonSchema;
  };
  return { components, toSchema };
}
