import {
  callUnary,
  createClient,
  createLogger,
  createMemoryBus,
  createPool,
  type EventBus,
  type Pool,
} from "@switchboard/kit";
import type { testDatabaseKinds } from "@switchboard/kit/testing";
import { seedInventory, startInventory, type RunningInventory } from "@switchboard/inventory";
import { callcontrol, inventory, wire } from "@switchboard/proto";
import {
  loadCallControlSettings,
  startCallControl,
  type RunningCallControl,
} from "../src/index.js";
import { type UnaryMethod } from "@switchboard/test-support/grpc";
import { startBaresip, type Baresip } from "@switchboard/test-support/sip-peers";
import { eventually } from "@switchboard/test-support/waiting";

export type DatabaseKind = (typeof testDatabaseKinds)[number];

/**
 * Inventory and call-control on real gRPC sockets over a fresh database (no gateway), for the
 * service's own integration tests. `restart()` stops call-control and starts a new instance on
 * the same database, as a crashed and rescheduled process would.
 */
export interface ServiceHarness {
  pool: Pool;
  inventoryPool: Pool;
  /** The inventory's gRPC address. */
  inventoryAddress: string;
  running: RunningCallControl;
  client: callcontrol.CallControlServiceClient;
  call<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    metadata?: Record<string, string>,
  ): Promise<Res>;
  /** Assigns a seeded number to the account (and seat); returns its E.164 form. */
  assignNumber(accountId: string, seatId?: string): Promise<string>;
  restart(env?: Record<string, string>): Promise<void>;
  /** Another call-control replica on the same database (stopped with the harness, unless it was). */
  startReplica(env?: Record<string, string>): Promise<RunningCallControl>;
  stop(): Promise<void>;
}

const baseEnv = {
  NODE_ENV: "test",
  SANDBOX_CALL_SECONDS: "0.3",
  SANDBOX_RING_DELAY_MS: "30",
  CALL_TIMER_POLL_MS: "50",
};

export async function startServiceHarness(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<ServiceHarness> {
  const database = await kind.create("callcontrol");
  const logger = createLogger("call-control-test");
  const bus: EventBus = createMemoryBus({ logger });
  const inventoryPool = createPool(database.url, { max: 4, name: "inventory-test" });
  const inv: RunningInventory = await startInventory({ pool: inventoryPool, bus, port: 0, logger });
  await seedInventory(inventoryPool, { count: 300, seed: 3 });
  const pool = createPool(database.url, { max: 8, name: "call-control-test" });
  const start = (overrides: Record<string, string>) =>
    startCallControl({
      pool,
      bus,
      port: 0,
      logger,
      inventoryAddress: `127.0.0.1:${inv.port}`,
      settings: loadCallControlSettings({ ...baseEnv, ...env, ...overrides }),
    });
  let running = await start({});
  let client = createClient(callcontrol.CallControlServiceClient, `127.0.0.1:${running.port}`);
  const invClient = createClient(inventory.InventoryServiceClient, `127.0.0.1:${inv.port}`);
  const invCall = <Req, Res>(method: Parameters<typeof callUnary<Req, Res>>[2], request: Req) =>
    callUnary("inventory", invClient, method, request, { deadlineMs: 30_000 });
  let available: string[] = [];
  const replicas: RunningCallControl[] = [];

  const harness: ServiceHarness = {
    pool,
    inventoryPool,
    inventoryAddress: `127.0.0.1:${inv.port}`,
    get running() {
      return running;
    },
    get client() {
      return client;
    },
    call: (method, request, metadata) =>
      callUnary("call-control", client, method, request, { deadlineMs: 30_000, metadata }),
    async assignNumber(accountId, seatId) {
      if (available.length === 0) {
        const found = await invCall(invClient.searchNumbers, {
          ...inventory.SearchNumbersRequest.fromPartial({ accountId, country: "US", limit: 200 }),
        });
        available = found.numbers.map((n) => n.number);
      }
      const number = available.shift();
      if (!number) throw new Error("no seeded number left");
      const { hold } = await invCall(invClient.createHold, { accountId, number, ttlSeconds: 600 });
      await invCall(invClient.assignHold, { accountId, holdId: hold!.id, seatId });
      return number;
    },
    async restart(overrides = {}) {
      client.close();
      await running.stop();
      running = await start(overrides);
      client = createClient(callcontrol.CallControlServiceClient, `127.0.0.1:${running.port}`);
    },
    async startReplica(overrides = {}) {
      const started = await start(overrides);
      // A test may stop it first (a replica draining): the harness then stops it no second time.
      let stopped: Promise<void> | undefined;
      const replica: RunningCallControl = {
        ...started,
        stop: (options) => (stopped ??= started.stop(options)),
      };
      replicas.push(replica);
      return replica;
    },
    async stop() {
      client.close();
      invClient.close();
      for (const replica of replicas) await replica.stop();
      await running.stop();
      await inv.stop();
      await bus.close();
      await pool.end();
      await inventoryPool.end();
      await database.drop();
    },
  };
  return harness;
}

/** The call's events from the outbox, in sequence order. */
export async function callEvents(pool: Pool, callId: string) {
  const { rows } = await pool.query<{
    type: string;
    sequence: number;
    data: Record<string, unknown>;
  }>(
    `SELECT type, sequence, data FROM call_control.outbox WHERE resource_id = $1 ORDER BY sequence`,
    [callId],
  );
  return rows;
}

/** A call as GetCall returns it, its status, cause and source spelled as the API spells them. */
export async function spelledCall(h: ServiceHarness, accountId: string, callId: string) {
  const call = (await h.call(h.client.getCall, { accountId, callId })).call!;
  return {
    ...call,
    status: wire.callStatus.spell(call.status),
    hangupCause: call.hangupCause && wire.hangupCause.spell(call.hangupCause),
    hangupSource: call.hangupSource && wire.hangupSource.spell(call.hangupSource),
  };
}

/** A seat (five calls at once) and its SIP password. */
export async function createSipSeat(h: ServiceHarness, accountId: string, name: string) {
  const created = await h.call(h.client.createSeat, { accountId, name, maxConcurrentCalls: 5 });
  return { id: created.seat!.id, password: created.sipPassword };
}

/**
 * The agent `front-desk`, a SIP seat (`createSipSeat`) and the route `main` sending `count` new
 * numbers to both: what an inbound call to one of those numbers rings.
 */
export async function routedSipSeat(h: ServiceHarness, accountId: string, count: number) {
  await h.call(h.client.createAgent, { accountId, name: "front-desk" });
  const seat = await createSipSeat(h, accountId, "desk");
  const dids: string[] = [];
  for (let i = 0; i < count; i++) dids.push(await h.assignNumber(accountId));
  await h.call(h.client.createRoute, {
    accountId,
    name: "main",
    numbers: dids,
    agent: "front-desk",
    seatId: seat.id,
  });
  return { seat, dids };
}

/** A baresip registered for the seat with call-control's SIP listener (waits for its binding). */
export async function registeredPhone(
  h: ServiceHarness,
  seat: { id: string; password: string },
  registrar: { host: string; port: number },
  answermode: "auto" | "manual",
): Promise<Baresip> {
  const phone = await startBaresip({
    username: seat.id,
    password: seat.password,
    registrar,
    answermode,
  });
  await eventually(
    async () =>
      (
        await h.pool.query(`SELECT 1 FROM call_control.sip_registrations WHERE seat_id = $1`, [
          seat.id,
        ])
      ).rowCount,
    (n) => n === 1,
    15_000,
  );
  return phone;
}

/** A call's phone leg: who INVITEd the phone (`owner_address`), over which hop, through which route set. */
export async function phoneLegOf(h: ServiceHarness, callId: string) {
  const { rows } = await h.pool.query<{
    owner_address: string;
    flow_transport: string;
    flow_address: string;
    flow_port: number;
    route_set: string[];
    acked: boolean;
  }>(
    `SELECT owner_address, flow_transport, flow_address, flow_port, route_set, acked
       FROM call_control.sip_dialogs WHERE call_id = $1 AND leg = 'phone'`,
    [callId],
  );
  return rows[0];
}

/** The id of the inbound call to `did` once its SIP trunk leg is recorded. */
export const inboundCallTo = (h: ServiceHarness, did: string) =>
  eventually(
    async () =>
      (
        await h.pool.query<{ id: string }>(
          `SELECT c.id FROM call_control.calls c JOIN call_control.sip_dialogs d ON d.call_id = c.id
            WHERE c.to_number = $1 AND c.direction = 'inbound' AND d.leg = 'trunk'`,
          [did],
        )
      ).rows[0]?.id,
    (id) => id !== undefined,
    20_000,
  ) as Promise<string>;

/** How the call ended (status, hangup cause, SIP code), once it has. */
export const endedCall = (h: ServiceHarness, accountId: string, callId: string, ms = 20_000) =>
  eventually(
    async () => (await h.call(h.client.getCall, { accountId, callId })).call!,
    (call) => call.endedAt !== undefined,
    ms,
  ).then((call) => ({
    status: wire.callStatus.spell(call.status),
    hangupCause: call.hangupCause && wire.hangupCause.spell(call.hangupCause),
    sipCode: call.sipCode,
  }));

export { eventually };
