import type { Pool } from "@switchboard/kit";

/**
 * Hears every statement the pool's clients send (pg's Client, as the clients are made of):
 * `heard` gets the client's application_name and the statement's text. Returns the undo.
 */
export async function hearStatements(
  pool: Pool,
  heard: (app: string | undefined, text: string) => void,
): Promise<() => void> {
  type Query = (this: unknown, ...args: unknown[]) => unknown;
  const client = await pool.connect();
  let found = Object.getPrototypeOf(client) as object | null;
  while (found && !Object.hasOwn(found, "query")) found = Object.getPrototypeOf(found) as object;
  client.release();
  if (!found) throw new Error("no query method on the pool's clients");
  const proto = found as { query: Query };
  const original = proto.query;
  proto.query = function query(this: unknown, ...args: unknown[]) {
    const app = (this as { connectionParameters?: { application_name?: string } })
      .connectionParameters?.application_name;
    const first = args[0];
    heard(app, typeof first === "string" ? first : ((first as { text?: string })?.text ?? "?"));
    return original.apply(this, args);
  };
  return () => {
    proto.query = original;
  };
}
