import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createLogger } from "@switchboard/kit";
import { seedInventory } from "@switchboard/inventory";
import { startPlatform, type RunningPlatform } from "@switchboard/platform";
import type { Recipient } from "./load.js";
import type { Network } from "./networks.js";
import { settings } from "./settings.js";

/** The account every run sends as, and its OAuth client. */
export const accountId = "acct_bench";
const clientId = "cli_bench";

/** A carrier's platform, and what reaches it. */
export interface BenchPlatform {
  platform: RunningPlatform;
  url: string;
  token: string;
}

/**
 * The whole platform (startPlatform: every component, as the embedded mode and the tests start
 * it) on `databaseUrl` and the real Redis (BullMQ, under `busPrefix`), the messaging carrier
 * `network`'s, the gateway's policies on: authentication (an OAuth access token), the rate limit
 * (raised so it never refuses) and the Idempotency-Key store.
 */
export async function startBenchPlatform(options: {
  databaseUrl: string;
  redisUrl: string;
  busPrefix: string;
  network: Network;
}): Promise<BenchPlatform> {
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const platform = await startPlatform({
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    busPrefix: options.busPrefix,
    logger: createLogger("bench", { level: process.env.LOG_LEVEL ?? "warn" }),
    serviceEnv: {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? "test",
      SANDBOX_RECEIPT_DELAY_MS: String(settings.receiptDelayMs),
      MESSAGING_SENDER_RATE: String(settings.senderRate),
      ...options.network.env,
    },
    gatewayEnv: {
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      BOOTSTRAP_ACCOUNT: accountId,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      REDIS_KEY_PREFIX: `${options.busPrefix}:rl:`,
      RATE_LIMITS: "*=1000000/1000000",
    },
    beforeGateway: (pools) =>
      seedInventory(pools.inventory!, { count: 3_000, seed: 5 }).then(() => undefined),
  });
  try {
    const url = platform.gateway.url;
    return { platform, url, token: await accessToken(url, clientSecret) };
  } catch (error) {
    await platform.stop();
    throw error;
  }
}

async function accessToken(url: string, secret: string): Promise<string> {
  const response = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials" }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The account's sending numbers, the template and the consenting recipients. */
export async function prepareSends(
  url: string,
  token: string,
): Promise<{ senders: string[]; recipients: Recipient[]; templateId: string }> {
  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        ...(init.headers as Record<string, string> | undefined),
      },
    });
    const body = (await response.json()) as T;
    if (response.status >= 300)
      throw new Error(
        `${init.method ?? "GET"} ${path} → ${response.status} ${JSON.stringify(body)}`,
      );
    return body;
  };
  const search = await api<{ data: { number: string }[] }>(
    `/v1/api/numbers/search?capabilities=sms&limit=${settings.senders}`,
  );
  const senders: string[] = [];
  for (const { number } of search.data) {
    const hold = await api<{ id: string }>("/v1/api/numbers/hold", {
      method: "POST",
      body: JSON.stringify({ number }),
    });
    await api(`/v1/api/numbers/holds/${hold.id}/assign`, { method: "POST" });
    senders.push(number);
  }
  const template = await api<{ id: string }>("/v1/api/templates", {
    method: "POST",
    body: JSON.stringify({
      name: "bench-otp",
      channels: ["sms"],
      body: "Hi {{name}}, your code is {{code}}.",
    }),
  });
  const recipients: Recipient[] = [];
  for (let i = 0; i < settings.recipients; i++) {
    // The last digit 0: the test SMSC delivers (defaultOutcome), as the sandbox does.
    const to = `+1555020${String(i).padStart(3, "0")}0`;
    const consent = await api<{ id: string }>("/v1/api/consents", {
      method: "POST",
      body: JSON.stringify({ phone_number: to, channels: ["sms"], source: "import" }),
    });
    recipients.push({ to, consentId: consent.id });
  }
  return { senders, recipients, templateId: template.id };
}

/** Deletes the run's keys (its queues and rate-limit buckets) from Redis. */
export async function clearRedis(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  redis.disconnect();
}
