import { statementText, type Pool } from "@switchboard/kit";

/**
 * Hears every statement the pool's clients send (pg's Client, as the clients are made of):
 * `heard` gets the client's application_name, the statement's text, that text spelled out
 * (each `EXECUTE` of a statement prepared in a simple query shown as the statement it runs) and
 * the client that sent it. Returns the undo.
 */
export async function hearStatements(
  pool: Pool,
  heard: (app: string | undefined, text: string, spelled: string, client: object) => void,
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
    const text = typeof first === "string" ? first : ((first as { text?: string })?.text ?? "?");
    heard(app, text, spelledOut(text), this as object);
    return original.apply(this, args);
  };
  return () => {
    proto.query = original;
  };
}

/** `text` with its `PREPARE`s left out and each `EXECUTE name(…)` shown as what it runs. */
function spelledOut(text: string): string {
  return text
    .replace(/PREPARE (\w+) AS [\s\S]*?;\nEXECUTE \1/g, "EXECUTE $1")
    .replace(/EXECUTE (\w+)/g, (whole, name: string) => statementText(name) ?? whole);
}

/**
 * What each connection sent, cut into units of work: a transaction (from the statement that
 * opens it with BEGIN to the one that carries its COMMIT or ROLLBACK), or one statement sent
 * outside any. Each unit's statements are its round trips; `hear` is hearStatements' listener.
 */
export function unitsOfWork(): {
  hear: (app: string | undefined, text: string, spelled: string, client: object) => void;
  units(): string[][];
} {
  const done: string[][] = [];
  const open = new Map<object, string[]>();
  return {
    hear(_app, _text, spelled, client) {
      const unit = open.get(client) ?? [];
      unit.push(spelled);
      const inTransaction = unit.length > 1 || /^\s*BEGIN\b/i.test(spelled);
      const closes = /\b(COMMIT|ROLLBACK)\s*;?\s*$/i.test(spelled);
      if (inTransaction && !closes) open.set(client, unit);
      else {
        open.delete(client);
        done.push(unit);
      }
    },
    units: () => [...done],
  };
}
