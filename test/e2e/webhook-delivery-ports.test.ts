import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";

type Problem = {
  type: string;
  status: number;
  detail: string;
  errors?: { pointer: string; detail: string }[];
};

// The chart sets WEBHOOK_ALLOWED_PORTS from networkPolicy.internetEgress.ports: a URL on any
// other port would be accepted and then time out at the NetworkPolicy on every delivery.
describe("webhook delivery ports (WEBHOOK_ALLOWED_PORTS=443)", () => {
  let p: WebhookPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startWebhookPlatform({
      env: {
        WEBHOOK_ALLOWED_PORTS: "443",
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*,hooks.internal.example.test:8443",
      },
    });
    p.hosts["public.example.test"] = ["93.184.215.14"];
    p.hosts["hooks.internal.example.test"] = ["10.40.0.10"];
    token = await p.token();
  });
  afterAll(() => p?.stop());

  const create = (url: string) =>
    p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url, events: ["*"] },
    });
  const count = async () =>
    (
      await p.pools.webhook.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook.subscriptions",
      )
    ).rows[0]!.n;

  it("refuses an https URL on another port with 422 unsafe-webhook-url, storing nothing", async () => {
    const before = await count();
    const response = await create("https://public.example.test:8443/hook");
    expect(response.status).toBe(422);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await response.json()) as Problem;
    expect(problem.type).toMatch(/\/unsafe-webhook-url$/);
    expect(problem.detail).toBe(
      "port 8443 is not allowed: webhooks are delivered to port 443 only",
    );
    expect(problem.errors).toEqual([{ pointer: "#/url", detail: problem.detail }]);
    expect(await count()).toBe(before);
  });

  it("accepts port 443 (implied or spelled), and the allow-listed private host's own port", async () => {
    for (const url of [
      "https://public.example.test/hook",
      "https://public.example.test:443/hook",
      "https://hooks.internal.example.test:8443/hook",
    ]) {
      expect((await create(url)).status, url).toBe(201);
    }
  });

  it("refuses the port on update too", async () => {
    const { id } = (await (await create("https://public.example.test/u")).json()) as {
      id: string;
    };
    const response = await p.request(`/v1/api/webhooks/subscriptions/${id}`, {
      method: "PATCH",
      token,
      json: { url: "https://public.example.test:9443/u" },
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as Problem).detail).toContain("port 9443 is not allowed");
  });
});
