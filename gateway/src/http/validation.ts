import { z } from "zod";
import { validationFailed, type FieldError } from "@switchboard/kit";

type Location = "body" | "query" | "params";

const escapePointer = (segment: PropertyKey): string =>
  String(segment).replace(/~/g, "~0").replace(/\//g, "~1");

/** JSON Pointer for an issue: `#/to` in the body, `#/query/<name>` for query parameters. */
function pointerFor(location: Location, path: PropertyKey[]): string {
  const segments = path.map(escapePointer);
  if (location === "body") return `#/${segments.join("/")}`.replace(/\/$/, "") || "#";
  return `#/${location === "params" ? "path" : "query"}/${segments.join("/")}`;
}

/** Parses input with a zod schema; failures become 422 validation-failed with pointers. */
export function parseInput<S extends z.ZodType>(
  schema: S | undefined,
  value: unknown,
  location: Location,
): z.infer<S> {
  if (!schema) return value as z.infer<S>;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          pointer: pointerFor(location, [...issue.path, key]),
          detail: location === "body" ? "unknown field" : "unknown parameter",
        }))
      : [{ pointer: pointerFor(location, issue.path), detail: issue.message }],
  );
  throw validationFailed(errors);
}
