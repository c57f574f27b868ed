import { expect } from "vitest";
import { smokeStepNames } from "@switchboard/agent-smoke";
import {
  startTestPlatform,
  type DatabaseKind,
  type TestPlatform,
} from "@switchboard/test-support/platform";

/** Shared by the agent smoke suites (PostgreSQL + Redis, and PGlite). */

/** The steps a report lists, in order. */
export const allStepNames: readonly string[] = smokeStepNames;

export const smokeTimeoutMs = 20_000;

/** The gateway sizes the call steps by SANDBOX_CALL_SECONDS, so it gets the services' value. */
const smokeEnv = {
  SMOKE_TIMEOUT_MS: String(smokeTimeoutMs),
  SMOKE_STEP_TIMEOUT_MS: "8000",
  SANDBOX_CALL_SECONDS: "1.5",
};

/** Compressed sandbox timings. */
const smokeServiceEnv = {
  SANDBOX_CALL_SECONDS: "1.5",
  SANDBOX_RING_DELAY_MS: "30",
  SANDBOX_RECEIPT_DELAY_MS: "100",
};

/**
 * A platform with compressed sandbox timings: PostgreSQL + Redis, or PGlite in process; `extra`
 * adds to the gateway's and the services' environment (another carrier).
 */
export const startSmokePlatform = (
  database: DatabaseKind,
  extra: { env?: Record<string, string>; serviceEnv?: Record<string, string> } = {},
): Promise<TestPlatform> =>
  startTestPlatform({
    database,
    redis: database === "postgres",
    seed: 300,
    env: { ...smokeEnv, ...extra.env },
    serviceEnv: { ...smokeServiceEnv, ...extra.serviceEnv },
  });

export interface SmokeStep {
  name: string;
  status: "pass" | "fail" | "skipped";
  duration_ms: number;
  detail?: string;
}

export interface SmokeBody {
  id: string;
  status: "pass" | "fail";
  started_at: string;
  duration_ms: number;
  steps: SmokeStep[];
}

export type UsageItem = Record<string, unknown> & { request_id: string | null };

export async function runSmoke(
  p: TestPlatform,
  token: string,
  headers: Record<string, string> = {},
) {
  const response = await p.request("/v1/api/agent/smoke", { method: "POST", token, headers });
  return { response, body: (await response.json()) as SmokeBody };
}

export function stepOf(body: SmokeBody, name: string): SmokeStep {
  const step = body.steps.find((s) => s.name === name);
  expect(step, name).toBeDefined();
  return step!;
}

/** Active, unexpired holds of any account (the smoke must leave none). */
export async function activeHolds(p: TestPlatform): Promise<number> {
  const { rows } = await p.inventoryPool.query<{ count: string }>(
    "SELECT count(*) FROM inventory.holds WHERE status = 'active' AND expires_at > now()",
  );
  return Number(rows[0]!.count);
}

export async function waitFor<T>(
  fetch: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fetch();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs the smoke with one service stopped, then restarts it and waits until `probe` (a GET the
 * gateway answers through that service) is 200 again: the gateway's channel reconnects with
 * backoff, and the next test must not meet it still backing off.
 */
export async function smokeWithout(p: TestPlatform, token: string, service: string, probe: string) {
  await p.stopService(service);
  try {
    const started = Date.now();
    const run = await runSmoke(p, token);
    return { ...run, elapsedMs: Date.now() - started };
  } finally {
    await p.restartService(service);
    await waitFor(
      () => p.request(probe, { token }).then((r) => r.status),
      (status) => status === 200,
    );
  }
}
