import { Agent, request } from "node:http";

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request over a kept-alive loopback connection: the status and the elapsed milliseconds. */
export function timedRequest(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { method: "GET", headers, agent }, (res) => {
      res.resume();
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

export const closeAgent = (): void => agent.destroy();
