import pg from "pg";

/**
 * `text` with its `$n` parameters written in as SQL literals (pg's escapeLiteral), so that
 * several statements can travel in one simple query — one round trip — e.g. a transaction's
 * last writes together with its COMMIT. Values: strings, numbers, booleans, null, Dates, arrays
 * of those (an ARRAY[…]); anything else (a Buffer, an object) throws: see `inlinable`.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`no value for $${n}`);
    return sqlLiteral(values[index]);
  });
}

function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`cannot inline the number ${value}`);
    return `'${String(value)}'`;
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(", ")}]`;
  if (typeof value === "string") return pg.escapeLiteral(value);
  throw new Error("inlineParameters: only strings, numbers, booleans, null, Dates and arrays");
}

/** Whether inlineParameters can write `values` in. */
export function inlinable(values: readonly unknown[]): boolean {
  return values.every(
    (value) =>
      value === null ||
      value === undefined ||
      ["string", "boolean"].includes(typeof value) ||
      (typeof value === "number" && Number.isFinite(value)) ||
      value instanceof Date ||
      (Array.isArray(value) && inlinable(value)),
  );
}
