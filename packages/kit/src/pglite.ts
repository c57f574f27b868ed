import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  /** A `postgres://` URL that `pg.Pool` connects to. */
  url: string;
  stop(): Promise<void>;
}

/**
 * PGlite served on the Postgres wire protocol, for the embedded mode and its tests. Every
 * service then talks to it through the same `pg.Pool` and SQL as in the mesh mode.
 * `dataDir` undefined keeps the database in memory.
 */
export async function startEmbeddedPostgres(
  options: { dataDir?: string; port?: number; maxConnections?: number } = {},
): Promise<EmbeddedPostgres> {
  const db = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    extensions: { pg_trgm },
  });
  const server = new PGLiteSocketServer({
    db,
    host: "127.0.0.1",
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? 32,
  });
  await server.start();
  // getServerConn() answers "host:port" of the bound socket.
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}
