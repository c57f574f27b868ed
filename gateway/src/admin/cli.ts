import { parseArgs } from "node:util";
import { DomainError, createPool } from "@switchboard/kit";
import { migrateGateway } from "../auth/migrations.js";
import { UsageError, commands, usage, type Printable } from "./cli-commands.js";

export interface AdminCliIo {
  databaseUrl: string;
  signingKeySecret: string;
  /** The platform's own account (BOOTSTRAP_ACCOUNT): only its clients and tokens may hold admin. */
  adminAccount: string;
  /** Standard output, one line per call. */
  out: (line: string) => void;
  /** Error output; defaults to `out`. */
  err?: (line: string) => void;
}

const options = {
  name: { type: "string" },
  id: { type: "string" },
  account: { type: "string" },
  scopes: { type: "string" },
  "expires-in": { type: "string" },
  purpose: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * `switchboard admin …`: accounts, clients, service tokens and signing keys. Migrates the
 * gateway schema first. Returns the exit code: 0 done, 1 failed, 2 bad usage.
 */
export async function runAdminCli(argv: string[], io: AdminCliIo): Promise<number> {
  const err = io.err ?? io.out;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    err(`error: ${(error as Error).message}`);
    err(usage);
    return 2;
  }
  const [noun, verb, ...args] = parsed.positionals;
  if (noun === undefined || noun === "help" || parsed.values.help) {
    io.out(usage);
    return 0;
  }
  const command = commands[`${noun} ${verb ?? ""}`];
  if (!command) {
    err(`error: unknown command "${[noun, verb].filter(Boolean).join(" ")}"`);
    err(usage);
    return 2;
  }
  const print = (value: Printable) => {
    if (parsed.values.json) io.out(JSON.stringify(toSnakeCase(value), null, 2));
    else for (const line of formatLines(value)) io.out(line);
  };
  const pool = createPool(io.databaseUrl, { max: 2, name: "switchboard-admin" });
  try {
    await migrateGateway(pool);
    await command(
      { options: parsed.values, args },
      { pool, signingKeySecret: io.signingKeySecret, adminAccount: io.adminAccount, print },
    );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err(`error: ${error.message}`);
      err(usage);
      return 2;
    }
    if (error instanceof DomainError) {
      err(`error: ${error.detail}`);
      return 1;
    }
    err(`error: ${(error as Error).message ?? String(error)}`);
    return 1;
  } finally {
    await pool.end();
  }
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function toSnakeCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSnakeCase);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), toSnakeCase(v)]));
  }
  return value;
}

const show = (value: unknown): string => {
  if (value === null || value === undefined || value === "") return "-";
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.join(" ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
};

/** `key: value` lines; list items separated by a blank line. */
function formatLines(value: Printable): string[] {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return ["(none)"];
  return items.flatMap((item, index) => [
    ...(index > 0 ? [""] : []),
    ...Object.entries(item).map(([key, v]) => `${snake(key)}: ${show(v)}`),
  ]);
}
