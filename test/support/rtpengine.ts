import { spawn } from "node:child_process";
import { Client } from "rtpengine-client";
import { freeSipPort, workerPortSlice } from "./sip-peers.js";

export interface Rtpengine {
  /** The ng control address (`SIP_RTP_RELAY`). */
  host: string;
  port: number;
  /** The media ports it hands out. */
  mediaPorts: { min: number; max: number };
  output(): string;
  /** Whether the daemon holds a media session of this Call-ID now (ng `query`). */
  hasSession(callId: string): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * An rtpengine daemon (Debian package `rtpengine`, installed by `.ci/run`) relaying in user
 * space on loopback: its ng control port and a window of 200 media ports from this worker's
 * media slice (see `workerPortSlice`). Resolves once it answers a ping.
 */
export async function startRtpengine(): Promise<Rtpengine> {
  const port = await freeSipPort();
  // One of the two 200-port windows in this worker's media slice (a file starts one at a time).
  const min = workerPortSlice(26_000, 6_000).min + Math.floor(Math.random() * 2) * 200;
  const child = spawn(
    "rtpengine",
    [
      "--config-file=none",
      "--foreground",
      "--log-stderr",
      "--log-level=5",
      "--table=-1",
      "--interface=127.0.0.1",
      `--listen-ng=127.0.0.1:${port}`,
      `--port-min=${min}`,
      `--port-max=${min + 199}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await gone;
  };
  const client = new Client({ timeout: 200 });
  try {
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null) throw new Error(`rtpengine exited:\n${output}`);
      const pong = await client.ping(port, "127.0.0.1").catch(() => undefined);
      if (pong?.result === "pong") break;
      if (attempt >= 100) throw new Error(`rtpengine did not answer a ping:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.close();
  }
  return {
    host: "127.0.0.1",
    port,
    mediaPorts: { min, max: min + 199 },
    output: () => output,
    hasSession: async (callId) => {
      const querying = new Client({ timeout: 1_000 });
      try {
        const reply = await querying.query(port, "127.0.0.1", { "call-id": callId });
        return reply.result === "ok";
      } finally {
        querying.close();
      }
    },
    stop,
  };
}
