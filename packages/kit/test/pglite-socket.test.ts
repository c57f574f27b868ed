import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../src/pglite.js";

/** The embedded database on a Unix socket in a private directory (issue 27, item 1). */
describe("PGlite on a Unix socket", () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-sock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves `pg` through host=<dir>, on a 0600 socket, and refuses a second server on it", async () => {
    const server = await startEmbeddedPostgres({ socketDir: dir });
    try {
      expect(new URL(server.url).searchParams.get("host")).toBe(dir);
      expect(statSync(join(dir, ".s.PGSQL.5432")).mode & 0o777).toBe(0o600);
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      await client.end();
      await expect(startEmbeddedPostgres({ socketDir: dir })).rejects.toThrow(
        /another process serves the database/,
      );
    } finally {
      await server.stop();
    }
  });

  it("replaces a socket file a dead process left behind", async () => {
    writeFileSync(join(dir, ".s.PGSQL.5432"), "");
    const server = await startEmbeddedPostgres({ socketDir: dir });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.end();
    await server.stop();
  });

  it("refuses a directory whose socket path would not fit in sun_path", async () => {
    await expect(startEmbeddedPostgres({ socketDir: `/tmp/${"d".repeat(100)}` })).rejects.toThrow(
      /longer than 107 bytes/,
    );
  });
});
