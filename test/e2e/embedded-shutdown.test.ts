import { request as httpRequest, Agent, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestFingerprint } from "@switchboard/gateway/policies/fingerprint";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/**
 * The embedded stop path (platform.stop, what SIGTERM runs) closes the gateway's HTTP server as
 * the mesh gateway does: a request in flight gets its reply with `Connection: close`, and an
 * idle keep-alive connection is closed at once instead of carrying more requests.
 */
describe("embedded mode stops its HTTP server like the mesh gateway", () => {
  let p: TestPlatform;
  let stopped = false;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "pglite", contract: "off" });
  });
  afterAll(async () => {
    if (!stopped) await p?.stop();
  });

  const send = (
    agent: Agent,
    path: string,
    init: { method?: string; token: string; key?: string; json?: unknown },
  ) =>
    new Promise<{ response: IncomingMessage; body: string; socket: Socket }>((resolve, reject) => {
      const url = new URL(path, p.url);
      const body = init.json === undefined ? undefined : JSON.stringify(init.json);
      const req = httpRequest(
        url,
        {
          agent,
          method: init.method ?? "GET",
          headers: {
            Authorization: `Bearer ${init.token}`,
            ...(body ? { "Content-Type": "application/json" } : {}),
            ...(init.key ? { "Idempotency-Key": init.key } : {}),
          },
        },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk.toString()));
          response.on("end", () => resolve({ response, body: text, socket: req.socket! }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  it("answers a request in flight with Connection: close and closes idle keep-alive sockets", async () => {
    const token = await p.token();
    const busy = new Agent({ keepAlive: true, maxSockets: 1 });
    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    // Both connections open and kept alive.
    expect((await send(busy, "/v1/api/agents", { token })).response.headers.connection).toBe(
      "keep-alive",
    );
    const first = await send(idle, "/v1/api/agents", { token });
    expect(first.response.headers.connection).toBe("keep-alive");
    const idleSocket = first.socket;
    const idleClosed = new Promise<void>((resolve) => idleSocket.once("close", () => resolve()));

    // A request in flight: it waits for a key another (lost) request still holds.
    const key = `shutdown-${Date.now()}`;
    const body = { name: "drained" };
    const store = p.gateway.policies.idempotencyStore;
    const claim = await store.claim(
      p.accountId,
      key,
      requestFingerprint("POST", "/api/agents", body, `client:${p.clientId}`),
    );
    if (claim.kind !== "claimed") throw new Error("the key was not claimed");
    const inFlight = send(busy, "/v1/api/agents", { method: "POST", token, key, json: body });
    await new Promise((resolve) => setTimeout(resolve, 200));

    const stopping = p.stop();
    stopped = true;
    // The idle keep-alive connection is closed by the server, long before its 65 s timeout.
    await idleClosed;
    // The request in flight still gets its reply, marked as the connection's last: it was
    // waiting for a key another gateway holds, so it is told to retry (elsewhere) at once
    // rather than holding the drain up to IDEMPOTENCY_WAIT_MS.
    const reply = await inFlight;
    expect(reply.response.statusCode).toBe(503);
    expect(reply.response.headers["retry-after"]).toBe("1");
    expect(reply.response.headers.connection).toBe("close");
    await stopping;
    busy.destroy();
    idle.destroy();
  });
});
