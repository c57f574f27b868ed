import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

/** A real HTTP receiver on loopback whose answers a test scripts. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to do with one request: a status (and headers), or hang until the client gives up. */
export type Answer = number | { status: number; headers?: Record<string, string> } | "hang";

export interface Receiver {
  /** http://localhost:<port>/hook (localhost is the exempt host in these tests). */
  url: string;
  port: number;
  received: Received[];
  /** Answers for the next requests, in order; afterwards `fallback`. */
  script(...answers: Answer[]): void;
  fallback: Answer;
  /** Called on every request as it arrives. */
  onRequest?: (request: Received) => void;
  close(): Promise<void>;
  /** Starts listening again on the same port after close(). */
  reopen(): Promise<void>;
}

export async function startReceiver(
  options: { fallback?: Answer; port?: number } = {},
): Promise<Receiver> {
  const answers: Answer[] = [];
  let server: Server;
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    fallback: options.fallback ?? 200,
    script: (...next) => void answers.push(...next),
    close: async () => {
      for (const res of hanging) res.destroy();
      hanging.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    reopen: async () => {
      server = listen();
      await new Promise<void>((resolve) => server.listen(receiver.port, "127.0.0.1", resolve));
    },
  };
  const listen = () =>
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const request = {
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          at: Date.now(),
        };
        receiver.received.push(request);
        receiver.onRequest?.(request);
        const answer = answers.length > 0 ? answers.shift()! : receiver.fallback;
        if (answer === "hang") {
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        }
        const { status, headers } =
          typeof answer === "number" ? { status: answer, headers: {} } : answer;
        res.writeHead(status, { "content-type": "text/plain", ...headers });
        res.end("ok");
      });
    });
  server = listen();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://localhost:${receiver.port}/hook`;
  return receiver;
}
