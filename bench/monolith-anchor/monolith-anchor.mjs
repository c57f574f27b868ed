/**
 * The project's own monolith anchor (issue "cost, restated"): what a team would write instead of
 * the mesh — one express process giving the floor request the gateway's guarantees, with no gRPC
 * hop and no queue — and bare express as the framework's ceiling. Same command line and output
 * as `../shared/bench/monolith-anchor` (ANCHOR_DIR), so `npm run bench:compare` runs either:
 *
 *   node monolith-anchor.mjs bench [-c 32] [-d 8]       both servers under load; JSON rows last
 *   node monolith-anchor.mjs serve hello|naive PORT     one server (`naive`: the monolith)
 *
 * The guarantees of `POST /v1/api/agents` and `GET /v1/api/agents?limit=1`:
 * - an EdDSA access token (`typ: at+jwt`), verified once and then remembered until it expires;
 * - a token bucket per (account, permission) in Redis (one Lua script per request);
 * - the Idempotency-Key claimed in PostgreSQL before the operation, its response stored after;
 * - the row, and an Ed25519-signed usage record (RFC 8785 canonical JSON, JCS via
 *   `canonicalize`), committed before the reply — in the POST's transaction with the row and
 *   the stored response.
 * It needs PostgreSQL (ANCHOR_DATABASE_URL, default the local server's `perfanchor`, dropped and
 * created) and Redis (ANCHOR_REDIS_URL).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import canonicalize from "canonicalize";
import express from "express";
import { Redis } from "ioredis";
import { SignJWT, jwtVerify } from "jose";
import pg from "pg";

const databaseUrl =
  process.env.ANCHOR_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/perfanchor";
const redisUrl = process.env.ANCHOR_REDIS_URL ?? "redis://127.0.0.1:6379";
const LIMIT = 100_000;

const SCHEMA = `
CREATE TABLE agents (id text PRIMARY KEY, account text NOT NULL, name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (account, name));
CREATE TABLE idempotency_keys (account text, key text, fingerprint text NOT NULL,
  state text NOT NULL, status int, body jsonb, created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, key));
CREATE TABLE usage_records (id text PRIMARY KEY, account text NOT NULL,
  request_id text UNIQUE NOT NULL, body jsonb NOT NULL, signature text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());`;

/** Takes a token from the bucket: [1 if admitted, tokens left]. */
const BUCKET = `local capacity = tonumber(ARGV[1]) local rate = tonumber(ARGV[2]) local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + (now - at) / 1000 * rate)
local admitted = 0 if tokens >= 1 then tokens = tokens - 1 admitted = 1 end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now) redis.call('PEXPIRE', KEYS[1], 60000)
return {admitted, math.floor(tokens)}`;

const INSERT_RECORD = `INSERT INTO usage_records (id, account, request_id, body, signature)
  VALUES ($1, $2, $3, $4, $5)`;

async function freshDatabase() {
  const admin = new pg.Client({ connectionString: databaseUrl.replace(/\/[^/]+$/, "/postgres") });
  await admin.connect();
  const name = new URL(databaseUrl).pathname.slice(1);
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  await pool.query(SCHEMA);
  return pool;
}

/** Bearer authentication: a verified token is remembered by its text until it expires. */
function authenticator(publicKey) {
  const verified = new Map();
  return async (authorization = "") => {
    const token = authorization.replace(/^Bearer /, "");
    const known = verified.get(token);
    if (known && known.exp * 1000 > Date.now()) return known;
    const { payload } = await jwtVerify(token, publicKey, {
      issuer: "anchor",
      audience: "anchor",
      typ: "at+jwt",
      algorithms: ["EdDSA"],
    });
    verified.set(token, payload);
    return payload;
  };
}

/** The signed usage record of one reply, as the INSERT's parameters. */
function usageRecord(privateKey, account, req, status) {
  const body = {
    id: `use_${randomUUID()}`,
    account,
    request_id: `req_${randomUUID()}`,
    method: req.method,
    route: req.path,
    status,
    occurred_at: new Date().toISOString(),
  };
  const signature = sign(null, Buffer.from(canonicalize(body)), privateKey).toString("base64url");
  return [body.id, account, body.request_id, body, signature];
}

async function serveMonolith(port) {
  const pool = await freshDatabase();
  const redis = new Redis(redisUrl);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const token = await new SignJWT({ account_id: "acct_anchor", scope: "calls:read calls:write" })
    .setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: "anchor-1" })
    .setIssuer("anchor")
    .setAudience("anchor")
    .setSubject("cli_anchor")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey);
  const authenticate = authenticator(publicKey);

  const app = express();
  app.use(express.json({ limit: "64kb" }));
  app.use(async (req, res, next) => {
    let principal;
    try {
      principal = await authenticate(req.headers.authorization);
    } catch {
      res.status(401).json({ type: "invalid-token" });
      return;
    }
    const permission = req.method === "GET" ? "calls:read" : "calls:write";
    const [admitted, left] = await redis.eval(
      BUCKET,
      1,
      `anchor:${principal.account_id}:${permission}`,
      LIMIT,
      LIMIT,
      Date.now(),
    );
    res.set({ "X-RateLimit-Limit": String(LIMIT), "X-RateLimit-Remaining": String(left) });
    if (!admitted) {
      res.status(429).json({ type: "rate-limited" });
      return;
    }
    req.principal = principal;
    next();
  });

  app.post("/v1/api/agents", async (req, res) => {
    const account = req.principal.account_id;
    const key = req.get("idempotency-key");
    const fingerprint = createHash("sha256").update(canonicalize(req.body)).digest("hex");
    const claimed = await pool.query(
      `INSERT INTO idempotency_keys (account, key, fingerprint, state) VALUES ($1, $2, $3, 'running')
       ON CONFLICT DO NOTHING RETURNING 1`,
      [account, key, fingerprint],
    );
    if (claimed.rowCount === 0) {
      const { rows } = await pool.query(
        "SELECT status, body FROM idempotency_keys WHERE account = $1 AND key = $2",
        [account, key],
      );
      res
        .status(rows[0]?.status ?? 409)
        .set("Idempotent-Replayed", "true")
        .json(rows[0]?.body);
      return;
    }
    const agent = {
      id: `agt_${randomUUID()}`,
      name: req.body.name,
      created_at: new Date().toISOString(),
    };
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO agents (id, account, name) VALUES ($1, $2, $3)", [
        agent.id,
        account,
        agent.name,
      ]);
      await client.query(
        `UPDATE idempotency_keys SET state = 'done', status = 201, body = $3
          WHERE account = $1 AND key = $2`,
        [account, key, agent],
      );
      await client.query(INSERT_RECORD, usageRecord(privateKey, account, req, 201));
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
    res.status(201).json(agent);
  });

  app.get("/v1/api/agents", async (req, res) => {
    const account = req.principal.account_id;
    const { rows } = await pool.query(
      "SELECT id, name, created_at FROM agents WHERE account = $1 ORDER BY id DESC LIMIT $2",
      [account, Number(req.query.limit ?? 1)],
    );
    await pool.query(INSERT_RECORD, usageRecord(privateKey, account, req, 200));
    res.json({ data: rows, has_more: rows.length > 0 });
  });

  app.listen(port, "127.0.0.1", () => process.send?.({ ready: true, token }));
}

function serveHello(port) {
  const app = express();
  app.get("/hello", (_req, res) => res.json({ hello: "world" }));
  app.listen(port, "127.0.0.1", () => process.send?.({ ready: true }));
}

/** The machine's busy CPU time (ms): user, nice, system, irq, softirq, steal. */
function machineBusyMs() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user + nice + system + irq + softirq + steal) * 10;
}

const load = (options) =>
  new Promise((resolve, reject) =>
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result))),
  );

async function bench(connections, duration) {
  const self = fileURLToPath(import.meta.url);
  const start = (kind, port) =>
    new Promise((resolve, reject) => {
      const child = fork(self, ["serve", kind, String(port)], { stdio: "inherit" });
      child.once("message", (message) => resolve({ child, token: message?.token }));
      child.once("exit", (code) => reject(new Error(`${kind} exited ${code}`)));
    });
  const rows = [];
  // cpu-ms per request: every process's CPU (server, PostgreSQL, Redis) less the load's own.
  const measure = async (label, options) => {
    await load({ connections, ...options, duration: 2 });
    const busy = machineBusyMs();
    const own = process.cpuUsage();
    const result = await load({ connections, duration, ...options });
    const loadMs = (({ user, system }) => (user + system) / 1000)(process.cpuUsage(own));
    const served = machineBusyMs() - busy - loadMs;
    rows.push({
      label,
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
      cpu_ms_per_request: Number((served / Math.max(1, result.requests.total)).toFixed(3)),
    });
  };

  const hello = await start("hello", 39981);
  await measure("bare express GET /hello", { url: "http://127.0.0.1:39981/hello" });
  hello.child.kill();

  const monolith = await start("naive", 39982);
  const headers = { authorization: `Bearer ${monolith.token}`, "content-type": "application/json" };
  let sequence = 0;
  await measure("monolith POST /v1/api/agents", {
    url: "http://127.0.0.1:39982",
    headers,
    requests: [
      {
        method: "POST",
        path: "/v1/api/agents",
        setupRequest: (request) => {
          sequence += 1;
          return {
            ...request,
            headers: { ...headers, "idempotency-key": `anchor-${process.pid}-${sequence}` },
            body: JSON.stringify({ name: `agent-${sequence}` }),
          };
        },
      },
    ],
  });
  await measure("monolith GET /v1/api/agents?limit=1", {
    url: "http://127.0.0.1:39982/v1/api/agents?limit=1",
    headers,
  });
  monolith.child.kill();
  for (const r of rows) {
    console.log(
      `${r.label.padEnd(44)} ${String(r.rps).padStart(7)}/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
        `${r.cpu_ms_per_request} cpu-ms/req  non2xx ${r.non2xx} errors ${r.errors}`,
    );
  }
  console.log(JSON.stringify(rows));
}

const [mode, kind, port] = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
if (mode === "serve") {
  if (kind === "hello") serveHello(Number(port));
  else await serveMonolith(Number(port));
} else if (mode === "bench") {
  await bench(flag("-c", 32), flag("-d", 8));
  process.exit(0);
} else {
  console.error("usage: monolith-anchor.mjs bench [-c 32] [-d 8]");
  process.exit(2);
}
