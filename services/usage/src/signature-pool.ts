import { sign, type KeyObject } from "node:crypto";
import { Worker } from "node:worker_threads";

/**
 * Ed25519 signatures off the main thread. An Ed25519 signature costs ~50–90 µs of CPU, several
 * times more than the rest of a record's ingestion; worker threads sign batches while the main
 * thread keeps fetching jobs and committing rows, so signing is pipelined rather than in line.
 * The worker code is dependency-free (node:crypto only) and evaluated from a string, so it runs
 * the same from dist/ and from source under a test runner.
 */
const workerSource = `
const { parentPort } = require("node:worker_threads");
const { sign } = require("node:crypto");
parentPort.on("message", ({ id, key, header, payloads }) => {
  try {
    const signatures = payloads.map((payload) => {
      const input = header + "." + Buffer.from(payload, "utf8").toString("base64url");
      return header + ".." + sign(null, Buffer.from(input, "ascii"), key).toString("base64url");
    });
    parentPort.postMessage({ id, signatures });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

/** The detached compact JWS of one payload (see detachedJws), in this thread. */
export function signDetached(encodedHeader: string, payload: string, key: KeyObject): string {
  const input = `${encodedHeader}.${Buffer.from(payload, "utf8").toString("base64url")}`;
  return `${encodedHeader}..${sign(null, Buffer.from(input, "ascii"), key).toString("base64url")}`;
}

interface Pending {
  resolve: (signatures: string[]) => void;
  reject: (error: Error) => void;
  size: number;
}

interface Signer {
  worker: Worker;
  pending: Map<number, Pending>;
  load: number;
}

export interface SignaturePool {
  /** Signs each payload; resolves in order. */
  sign(key: KeyObject, encodedHeader: string, payloads: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}

/** Batches below this size are not split across threads. */
const splitThreshold = 64;

/** `threads` worker threads (0: sign in this thread). */
export function createSignaturePool(threads: number): SignaturePool {
  if (threads <= 0) {
    return {
      sign: async (key, header, payloads) => payloads.map((p) => signDetached(header, p, key)),
      close: async () => undefined,
    };
  }
  let nextId = 0;
  let closed = false;
  const spawn = (): Signer => {
    const signer: Signer = {
      worker: new Worker(workerSource, { eval: true }),
      pending: new Map(),
      load: 0,
    };
    signer.worker.unref();
    signer.worker.on(
      "message",
      (message: { id: number; signatures?: string[]; error?: string }) => {
        const job = signer.pending.get(message.id);
        if (!job) return;
        signer.pending.delete(message.id);
        signer.load -= job.size;
        if (message.signatures) job.resolve(message.signatures);
        else job.reject(new Error(`signing failed: ${message.error ?? "unknown error"}`));
      },
    );
    const fail = (error: Error) => {
      for (const job of signer.pending.values()) job.reject(error);
      signer.pending.clear();
      signer.load = 0;
      if (!closed) signers[signers.indexOf(signer)] = spawn();
    };
    signer.worker.on("error", fail);
    signer.worker.on("exit", (code) => {
      if (!closed) fail(new Error(`signing thread exited with code ${code}`));
    });
    return signer;
  };
  const signers: Signer[] = Array.from({ length: threads }, spawn);

  const run = (key: KeyObject, header: string, payloads: string[]): Promise<string[]> => {
    const signer = signers.reduce((least, s) => (s.load < least.load ? s : least));
    const id = (nextId += 1);
    signer.load += payloads.length;
    return new Promise<string[]>((resolve, reject) => {
      signer.pending.set(id, { resolve, reject, size: payloads.length });
      signer.worker.postMessage({ id, key, header, payloads });
    });
  };

  return {
    async sign(key, header, payloads) {
      if (closed) throw new Error("the signature pool is closed");
      if (payloads.length === 0) return [];
      const parts = payloads.length < splitThreshold ? 1 : threads;
      const size = Math.ceil(payloads.length / parts);
      const chunks: string[][] = [];
      for (let i = 0; i < payloads.length; i += size) chunks.push(payloads.slice(i, i + size));
      return (await Promise.all(chunks.map((chunk) => run(key, header, chunk)))).flat();
    },
    async close() {
      closed = true;
      await Promise.all(signers.map((s) => s.worker.terminate()));
      for (const signer of signers) {
        for (const job of signer.pending.values())
          job.reject(new Error("the signature pool is closed"));
      }
    },
  };
}
