import { Agent, request } from "node:http";

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export interface TimedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** One request over a kept-alive loopback connection; resolves with the status and the elapsed ms. */
export function timedRequest(options: TimedRequest): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      options.url,
      { method: options.method, headers: options.headers, agent },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

export const closeClient = () => agent.destroy();
