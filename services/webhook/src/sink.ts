import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger, Pool, Queryable } from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import type { SecretBox } from "./secret-box.js";
import { openKeys, sealedSecretsInForce } from "./secrets.js";
import { verifySignature } from "./signature.js";

/**
 * The platform's internal webhook sink: a loopback HTTP receiver in the webhook service that
 * the agent smoke subscribes to. It is the one target the SSRF guard lets through without an
 * exemption, and only at its own origin. It verifies each request's Standard Webhooks
 * signature against the secrets of the subscriptions that delivered that webhook-id, and keeps
 * a receipt (headers, raw body, verdict) for a day so the smoke can check it end to end.
 */
export interface InternalSink {
  /** http://127.0.0.1:<port>/sink */
  url: string;
  origin: string;
  close(): Promise<void>;
}

const maxBody = 256 * 1024;

export async function startSink(options: {
  pool: Pool;
  box: SecretBox;
  logger: Logger;
  port: number;
}): Promise<InternalSink> {
  const { pool, box, logger } = options;
  const server: Server = createServer((req, res) => {
    const reply = (status: number) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ received: status === 200 }));
    };
    if (req.method !== "POST" || req.url !== "/sink") return reply(404);
    readBody(req)
      .then(
        async (body) => {
          const id = header(req, "webhook-id");
          const timestamp = header(req, "webhook-timestamp");
          const signature = header(req, "webhook-signature");
          const accountId = accountOf(body);
          if (!id || !timestamp || !signature || !accountId) return reply(400);
          await recordReceipt(pool, box, { id, timestamp, signature, body, accountId });
          reply(200);
        },
        () => reply(400),
      )
      .catch((error: unknown) => {
        logger.warn({ err: error }, "internal sink failed to record a receipt");
        if (!res.headersSent) reply(500);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/sink`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === "string" && value.length <= 4096 ? value : undefined;
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody) {
        reject(new Error("too large"));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function accountOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { account_id?: unknown };
    return typeof parsed.account_id === "string" && parsed.account_id.length <= 255
      ? parsed.account_id
      : undefined;
  } catch {
    return undefined;
  }
}

async function recordReceipt(
  pool: Pool,
  box: SecretBox,
  receipt: { id: string; timestamp: string; signature: string; body: string; accountId: string },
): Promise<void> {
  // The subscriptions of that account that have a delivery with this webhook-id.
  const { rows } = await pool.query<{ id: string; sealed: string[] }>(
    `SELECT s.id, ${sealedSecretsInForce} AS sealed
       FROM webhook.deliveries d JOIN webhook.subscriptions s ON s.id = d.subscription_id
      WHERE d.event_id = $1 AND d.account_id = $2`,
    [receipt.id, receipt.accountId],
  );
  const headers = { id: receipt.id, timestamp: receipt.timestamp, signature: receipt.signature };
  const verifiedBy = rows.find((row) =>
    verifySignature(openKeys(box, row.id, row.sealed), headers, receipt.body),
  );
  await insertReceipt(pool, receipt, verifiedBy?.id);
}

const insertReceipt = (
  db: Queryable,
  r: { id: string; timestamp: string; signature: string; body: string; accountId: string },
  subscriptionId: string | undefined,
) =>
  db.query(
    `INSERT INTO webhook.sink_receipts
       (account_id, webhook_id, webhook_timestamp, webhook_signature, body, verified, subscription_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      r.accountId,
      r.id,
      r.timestamp,
      r.signature,
      r.body,
      subscriptionId !== undefined,
      subscriptionId ?? null,
    ],
  );

interface ReceiptRow {
  webhook_id: string;
  webhook_timestamp: string;
  webhook_signature: string;
  body: string;
  verified: boolean;
  subscription_id: string | null;
  received_at: Date;
}

/** The account's receipts, newest first. */
export async function listSinkReceipts(
  pool: Pool,
  request: webhook.ListSinkReceiptsRequest,
): Promise<webhook.SinkReceipt[]> {
  const limit = request.limit > 0 ? Math.min(request.limit, 100) : 20;
  const { rows } = await pool.query<ReceiptRow>(
    `SELECT webhook_id, webhook_timestamp, webhook_signature, body, verified, subscription_id,
            received_at
       FROM webhook.sink_receipts
      WHERE account_id = $1 AND ($2::text IS NULL OR webhook_id = $2)
      ORDER BY id DESC LIMIT $3`,
    [request.accountId, request.webhookId ?? null, limit],
  );
  return rows.map((row) => ({
    webhookId: row.webhook_id,
    webhookTimestamp: row.webhook_timestamp,
    webhookSignature: row.webhook_signature,
    body: row.body,
    verified: row.verified,
    subscriptionId: row.subscription_id ?? undefined,
    receivedAt: row.received_at.toISOString(),
  }));
}
