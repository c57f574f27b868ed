import {
  callUnary,
  createClient,
  createLogger,
  createPool,
  DomainError,
  type EventBus,
  type Pool,
} from "@switchboard/kit";
import type { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory } from "@switchboard/proto";
import { seedInventory, startInventory, type RunningInventory } from "../src/index.js";
import { failure, type UnaryMethod } from "@switchboard/test-support/grpc";

export type DatabaseKind = (typeof testDatabaseKinds)[number];

/** A real gRPC server on a fresh database, and a client of the generated stubs. */
export interface Harness {
  pool: Pool;
  running: RunningInventory;
  client: inventory.InventoryServiceClient;
  call<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    metadata?: Record<string, string>,
  ): Promise<Res>;
  stop(): Promise<void>;
}

export async function startHarness(
  kind: DatabaseKind,
  options: { seed?: number; count?: number; holdLimit?: number; bus?: EventBus } = {},
): Promise<Harness> {
  const database = await kind.create("inventory");
  const pool = createPool(database.url, { max: 10, name: "inventory-test" });
  const running = await startInventory({
    pool,
    port: 0,
    logger: createLogger("inventory-test"),
    holdLimit: options.holdLimit ?? 5,
    sweepIntervalMs: 3_600_000,
    ...(options.bus ? { bus: options.bus } : {}),
  });
  await seedInventory(pool, { count: options.count ?? 3_000, seed: options.seed ?? 11 });
  const client = createClient(inventory.InventoryServiceClient, `127.0.0.1:${running.port}`);
  return {
    pool,
    running,
    client,
    call: (method, request, metadata) =>
      callUnary("inventory", client, method, request, { deadlineMs: 60_000, metadata }),
    stop: async () => {
      client.close();
      await running.stop();
      await pool.end();
      await database.drop();
    },
  };
}

/** The DomainError kind a call failed with ("ok" if it succeeded). */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    if (error instanceof DomainError) return error.kind;
    throw error;
  }
}

export { failure };
