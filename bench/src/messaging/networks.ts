import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { processCpuMs } from "../cpu-time.js";
import type { Observer } from "./observer.js";
import { settings } from "./settings.js";
import type { SmscRecords } from "./smsc-process.js";

export type Carrier = "sandbox" | "smpp";

/** What the network took, for the checks: each submit's sender and time, and the counts. */
export interface NetworkSends {
  list: { from: string; at: number }[];
  messages_handed_over: number;
  duplicates: number;
  checks: NetworkChecks;
}

/** The sandbox's checks, or the SMSC's. */
export interface NetworkChecks {
  carrier_sends: number;
  max_submits_per_message?: number;
  smsc_distinct_message_ids?: number;
  smsc_distinct_texts?: number;
  messages_with_their_submit?: number;
  smsc_throttled?: number;
  smsc_refused?: number;
  receipt_attempts?: Record<string, number>;
}

/**
 * The far side of a carrier: the sandbox is part of the platform (its simulated network is a
 * table of the platform's database); the test SMSC runs in a child process, its CPU apart.
 */
export interface Network {
  /** The services' settings for it. */
  env: Record<string, string>;
  /** Where the messages go, for the report. */
  where: string;
  /** CPU time of its process so far (left out of the machine's). */
  cpuMs(): number;
  /** What it took of the messages `ids`. */
  sends(db: Observer, ids: string[]): Promise<NetworkSends>;
  stop(): Promise<void>;
}

export const networks: Record<Carrier, () => Promise<Network>> = {
  sandbox: async () => ({
    env: { MESSAGING_CARRIER: "sandbox" },
    where:
      "the sandbox carrier, in the platform process (its network is a table of the platform's database)",
    cpuMs: () => 0,
    sends: sandboxSends,
    stop: async () => undefined,
  }),
  smpp: async () => {
    const account = { systemId: "bench", password: "bench" };
    const child = fork(
      new URL("./smsc-process.js", import.meta.url),
      [JSON.stringify({ ...account, receiptDelayMs: settings.receiptDelayMs })],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    const { host, port } = await reply<{ host: string; port: number }>(child);
    return {
      env: {
        MESSAGING_CARRIER: "smpp",
        SMPP_HOST: host,
        SMPP_PORT: String(port),
        SMPP_SYSTEM_ID: account.systemId,
        SMPP_PASSWORD: account.password,
        SMPP_THROUGHPUT: String(settings.smppThroughput),
      },
      where: `the test SMSC in a child process (pid ${child.pid}; its CPU time left out)`,
      cpuMs: () => processCpuMs(child.pid!),
      sends: async (db, ids) => smscSends(db, ids, await reply<SmscRecords>(child, "records")),
      stop: async () => {
        if (child.exitCode !== null) return;
        const exited = once(child, "exit");
        child.send("stop");
        await exited;
      },
    };
  },
};

export const isCarrier = (name: string): name is Carrier => Object.hasOwn(networks, name);

/** The child's next message (after sending it `command`, if given). */
function reply<T>(child: ChildProcess, command?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message as T));
    child.once("exit", (code) => reject(new Error(`the test SMSC exited (${code})`)));
    if (command) child.send(command);
  });
}

/** The sandbox's network table: one row per message it took, with how often it was asked. */
async function sandboxSends(db: Observer, ids: string[]): Promise<NetworkSends> {
  const { rows } = await db.query<{ from: string; at: string; submit_calls: number }>(
    `SELECT from_number AS "from", extract(epoch FROM accepted_at) * 1000 AS at, submit_calls
       FROM messaging.sandbox_network WHERE client_ref = ANY($1)`,
    [ids],
  );
  const submits = rows.reduce((sum, row) => sum + row.submit_calls, 0);
  return {
    list: rows.map((row) => ({ from: row.from, at: Number(row.at) })),
    messages_handed_over: rows.length,
    duplicates: submits - rows.length,
    checks: {
      carrier_sends: rows.length,
      max_submits_per_message: rows.reduce((max, row) => Math.max(max, row.submit_calls), 0),
    },
  };
}

/**
 * What the test SMSC accepted (single-segment texts, so one submit_sm per message): every
 * message's provider id among its submits, no message id and no text twice.
 */
async function smscSends(db: Observer, ids: string[], records: SmscRecords): Promise<NetworkSends> {
  const { submits } = records;
  const { rows } = await db.query<{ id: string }>(
    `SELECT provider_message_id AS id FROM messaging.messages WHERE id = ANY($1)`,
    [ids],
  );
  const submitIds = new Set(submits.map((s) => s.id));
  const texts = new Set(submits.map((s) => s.text));
  const matched = rows.filter((row) => submitIds.has(row.id)).length;
  return {
    list: submits.map((s) => ({ from: s.from, at: s.at })),
    messages_handed_over: matched,
    duplicates: submits.length - Math.min(submitIds.size, texts.size),
    checks: {
      carrier_sends: submits.length,
      smsc_distinct_message_ids: submitIds.size,
      smsc_distinct_texts: texts.size,
      messages_with_their_submit: matched,
      smsc_throttled: records.throttled,
      smsc_refused: records.refused,
      receipt_attempts: records.receiptAttempts,
    },
  };
}
