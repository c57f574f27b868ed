import { randomBytes } from "node:crypto";
import { createPool, type Pool } from "@switchboard/kit";
import { clientCredentialsToken } from "@switchboard/kit/testing";
import {
  PUBLIC_URL,
  startTestPlatform,
  type TestPlatform,
} from "../../../test/support/platform.js";
import type { RunningCallControl } from "../src/index.js";

export { PUBLIC_URL };

/**
 * The shared test platform (every component of platform/src/components.ts behind a gateway
 * whose responses are checked against its OpenAPI document) on a fresh real PostgreSQL
 * database, with what the call suites add: compressed sandbox timers, a second account, a
 * pool for assertions on call_control tables and a helper that assigns numbers.
 */
export interface CallPlatform {
  url: string;
  accountId: string;
  test: TestPlatform;
  /** A pool on the test database, for assertions on call_control (and gateway) tables. */
  db: Pool;
  token(scope?: string): Promise<string>;
  /** A token of another account. */
  otherToken(): Promise<string>;
  request: TestPlatform["request"];
  callControl(): RunningCallControl;
  /** Assigns an unused seeded number to the account (optionally to a seat); returns it. */
  assignNumber(token: string, seatId?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startCallPlatform(
  options: { env?: Record<string, string>; redis?: boolean; seed?: number } = {},
): Promise<CallPlatform> {
  const test = await startTestPlatform({
    database: "postgres",
    seed: options.seed ?? 400,
    ...(options.redis ? { redis: true } : {}),
    serviceEnv: {
      SANDBOX_CALL_SECONDS: "0.5",
      SANDBOX_RING_DELAY_MS: "50",
      CALL_TIMER_POLL_MS: "100",
      ...options.env,
    },
  });
  // A replica bootstrapping a second account: its client's tokens verify at every gateway.
  const other = { clientId: "cli_other", secret: `sbcs_${randomBytes(24).toString("base64url")}` };
  await test.startReplica({
    BOOTSTRAP_ACCOUNT: "acct_other",
    BOOTSTRAP_CLIENT_ID: other.clientId,
    BOOTSTRAP_CLIENT_SECRET: other.secret,
  });
  const db = createPool(test.database.url, { max: 4, name: "calls-test" });

  let available: string[] = [];
  const assignNumber = async (token: string, seatId?: string) => {
    if (available.length === 0) {
      const search = await test.request(
        "/v1/api/numbers/search?country=US&capabilities=voice&limit=200",
        { token },
      );
      available = ((await search.json()) as { data: { number: string }[] }).data.map(
        (n) => n.number,
      );
    }
    const number = available.shift();
    if (!number) throw new Error("no seeded number left");
    const held = await test.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    if (held.status !== 201) throw new Error(`hold failed: ${held.status} ${await held.text()}`);
    const { id } = (await held.json()) as { id: string };
    const assigned = await test.request(`/v1/api/numbers/holds/${id}/assign`, {
      method: "POST",
      token,
      json: seatId ? { seat_id: seatId } : {},
    });
    if (assigned.status !== 200) throw new Error(`assign failed: ${assigned.status}`);
    return number;
  };

  return {
    url: test.url,
    accountId: test.accountId,
    test,
    db,
    token: (scope) => test.token(scope),
    otherToken: () =>
      clientCredentialsToken((init) => test.fetch(`${test.url}/oauth/token`, init), {
        id: other.clientId,
        secret: other.secret,
      }),
    request: test.request,
    callControl: () => test.platform.services["call-control"]!.instance as RunningCallControl,
    assignNumber,
    stop: async () => {
      await db.end();
      await test.stop();
    },
  };
}

/** Polls `read` until `done` holds (or the deadline passes, returning the last value). */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
