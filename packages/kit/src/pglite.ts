import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  /** A `postgres://` URL that `pg.Pool` connects to. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Connections the PGlite server accepts. Past it a connection is dropped (ECONNRESET in a pool,
 * a 500 or 503 to a client), so it covers every pool of the embedded platform at once — five
 * services (8 each), messaging's delivery pool (8), the gateway's two (10 each), the admin
 * CLI (2): 78 — with room to spare. Connections cost PGlite only a socket: one session serves
 * them all in turn.
 */
export const EMBEDDED_MAX_CONNECTIONS = 256;

/** The file name libpq and `pg` look for in a socket directory (`host=/dir`, default port). */
const SOCKET_NAME = ".s.PGSQL.5432";
/** sun_path holds 108 bytes, its terminating NUL included. */
const MAX_SOCKET_PATH = 107;

/**
 * PGlite served on the Postgres wire protocol, for the embedded mode and its tests. Every
 * service then talks to it through the same `pg.Pool` and SQL as in the mesh mode.
 * `dataDir` undefined keeps the database in memory.
 *
 * PGlite accepts any user and password. With `socketDir` it listens on a Unix socket there
 * (`<socketDir>/.s.PGSQL.5432`, mode 0600) and on no TCP port, so only the user who owns the
 * directory (the embedded data dir, mode 0700) can connect; without it, on a loopback TCP
 * port (tests with an in-memory database only).
 */
export async function startEmbeddedPostgres(
  options: { dataDir?: string; socketDir?: string; port?: number; maxConnections?: number } = {},
): Promise<EmbeddedPostgres> {
  const socketPath = options.socketDir ? join(options.socketDir, SOCKET_NAME) : undefined;
  if (socketPath) await clearStaleSocket(socketPath);
  const db = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    extensions: { pg_trgm },
  });
  const server = new PGLiteSocketServer({
    db,
    ...(socketPath ? { path: socketPath } : { host: "127.0.0.1", port: options.port ?? 0 }),
    maxConnections: options.maxConnections ?? EMBEDDED_MAX_CONNECTIONS,
  });
  pinExtendedQueryBatches(server, db);
  await server.start();
  if (socketPath) chmodSync(socketPath, 0o600);
  // getServerConn() answers "host:port" of the bound socket, or the socket's path.
  return {
    url: options.socketDir
      ? `postgres://postgres@localhost/postgres?host=${encodeURIComponent(options.socketDir)}`
      : `postgres://postgres@${server.getServerConn()}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

/**
 * A socket file left by a process that died is removed; one a running process still serves is
 * an error (two PGlite instances on one data directory would corrupt it).
 */
async function clearStaleSocket(path: string): Promise<void> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new Error(
      `the database socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter DATA_DIR`,
    );
  }
  if (!existsSync(path)) return;
  const served = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (served) throw new Error(`another process serves the database at ${path}`);
  unlinkSync(path);
}

/**
 * pglite-socket (0.2.x) serialises single protocol messages from all connections onto the one
 * PGlite session and keeps a connection's turn only while a transaction is open. An
 * extended-query batch (Parse/Bind/Describe/Execute … Sync) outside a transaction is not one,
 * so concurrent parameterised queries from two pooled connections interleave and clobber the
 * unnamed prepared statement ("unnamed prepared statement does not exist", or wrong rows):
 * electric-sql/pglite#1046, #977. The queue decides through `db.isInTransaction()`, so it is
 * given a view of the database that also reports "pinned" from a connection's first
 * extended-query message until its Sync has run.
 */
function pinExtendedQueryBatches(server: PGLiteSocketServer, db: PGlite): void {
  const queue = (server as unknown as { queryQueue?: { db?: unknown } }).queryQueue;
  if (!queue || queue.db !== db) return; // another version: leave it alone
  const extended = new Set(["P", "B", "D", "E", "C", "H"]);
  let batchOpen = false;
  queue.db = new Proxy(db, {
    get(target, property, receiver) {
      if (property === "isInTransaction") return () => batchOpen || target.isInTransaction();
      if (property === "execProtocolRawStream") {
        return async (message: Uint8Array, options: unknown) => {
          const type = String.fromCharCode(message[0] ?? 0);
          try {
            return await target.execProtocolRawStream(
              message,
              options as Parameters<PGlite["execProtocolRawStream"]>[1],
            );
          } finally {
            batchOpen = extended.has(type)
              ? true
              : type === "S" || type === "Q"
                ? false
                : batchOpen;
          }
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
