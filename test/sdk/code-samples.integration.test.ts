import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sampleIdempotencyKey } from "@switchboard/gateway/openapi/code-samples";
import { story } from "@switchboard/gateway/schemas/story";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
/** Inside the repository, so a sample's `@switchboard/sdk` resolves to the workspace's SDK. */
const samplesDir = fileURLToPath(new URL(`./.samples-${process.pid}/`, import.meta.url));

interface Sample {
  lang: string;
  label: string;
  source: string;
}
interface Operation {
  operationId: string;
  responses: Record<string, unknown>;
  "x-codeSamples": Sample[];
}
type Json = Record<string, unknown> & { id: string };

/**
 * Every operation's `x-codeSamples` (curl and the TypeScript SDK), executed against a live
 * platform (PostgreSQL, sandbox carriers): the story's values in each sample (ids, numbers,
 * names, URLs) are replaced by the fixture's live ones, and each must answer the operation's
 * documented success status.
 */
describe("the reference's code samples, run", () => {
  let p: TestPlatform;
  let token: string;
  let receiver: Receiver;
  let failing: Receiver;
  let document: { paths: Record<string, Record<string, Operation>> };
  /** The story's value → the fixture's, for every sample. */
  const base = new Map<string, string>();
  let numbers: string[] = [];
  let made = 0;
  const unique = (stem: string) => `${stem}-${++made}`;

  const api = async (method: string, path: string, json?: unknown, status?: number) => {
    const reply = await p.request(path, { method, token, ...(json ? { json } : {}) });
    const text = await reply.text();
    if (status ? reply.status !== status : !reply.ok) {
      throw new Error(`${method} ${path}: ${reply.status} ${text}`);
    }
    return (text ? JSON.parse(text) : {}) as Json;
  };
  const waitFor = async <T>(what: string, check: () => Promise<T | undefined>) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  /** An available voice+sms number, held; its hold. */
  const hold = async () => {
    const number = numbers.shift();
    if (!number) throw new Error("no seeded number left");
    return api("POST", "/v1/api/numbers/hold", { number });
  };
  /** An available number assigned to the account (and to `seat`); its E.164 and id. */
  const assigned = async (seat?: string) => {
    const held = await hold();
    await api("POST", `/v1/api/numbers/holds/${held.id}/assign`, seat ? { seat_id: seat } : {});
    return { number: held.number as string, id: held.number_id as string };
  };
  const seat = async () =>
    api("POST", "/v1/api/seats", { name: unique("seat"), max_concurrent_calls: 1000 });
  const agent = async () => api("POST", "/v1/api/agents", { name: unique("agent") });
  const route = async (number?: string) => {
    const line = number ?? (await assigned()).number;
    return api("POST", "/v1/api/routes", {
      name: unique("line"),
      numbers: [line],
      agent: base.get(story.agent),
      seat_id: base.get(story.seatId),
    });
  };
  const failedDelivery = async () => {
    const subscription = await api("POST", "/v1/api/webhooks/subscriptions", {
      url: failing.url,
      events: ["number.hold_expired"],
    });
    const queued = await api("POST", `/v1/api/webhooks/subscriptions/${subscription.id}/test`);
    return waitFor("a failed delivery", async () => {
      const delivery = await api("GET", `/v1/api/webhooks/deliveries/${queued.id}`);
      return delivery.status === "failed" ? delivery.id : undefined;
    });
  };

  /**
   * What an operation's samples need beyond the shared fixture, made afresh for each run (curl,
   * then the SDK): what the operation uses up (a hold, a live call, a number to release) or
   * names uniquely (an agent's name).
   */
  const fresh: Record<string, () => Promise<Record<string, string>>> = {
    holdNumber: async () => ({ [story.ours]: numbers.shift()! }),
    releaseHold: async () => ({ [story.holdId]: (await hold()).id }),
    assignHold: async () => ({ [story.holdId]: (await hold()).id }),
    releaseNumber: async () => ({ [story.numberId]: (await assigned()).id }),
    createSeat: async () => ({ "front desk": unique("desk") }),
    updateSeat: async () => ({ [story.seatId]: (await seat()).id, "front desk": unique("desk") }),
    deleteSeat: async () => ({ [story.seatId]: (await seat()).id }),
    createAgent: async () => ({ [story.agent]: unique("agent") }),
    updateAgent: async () => {
      const made = await agent();
      return { [story.agentId]: made.id, [story.agent]: made.name as string };
    },
    deleteAgent: async () => ({ [story.agentId]: (await agent()).id }),
    createRoute: async () => ({
      [story.ours]: (await assigned()).number,
      "front desk line": unique("line"),
    }),
    updateRoute: async () => {
      const made = await route();
      return {
        [story.routeId]: made.id,
        [story.ours]: (made.numbers as string[])[0]!,
        "front desk line": unique("line"),
      };
    },
    deleteRoute: async () => ({ [story.routeId]: (await route()).id }),
    hangupCall: async () => {
      const call = await api("POST", "/v1/api/calls/outbound", {
        to: story.callee,
        from: base.get(story.ours),
        agent: base.get(story.agent),
      });
      return { [story.callId]: call.id };
    },
    answerInboundCall: async () => {
      const call = await api("POST", "/v1/api/sandbox/calls/inbound", {
        from: story.callee,
        to: base.get(story.ours),
      });
      expect(call.status).toBe("ringing");
      return { [story.callId]: call.id };
    },
    createTemplate: async () => ({ "appointment-reminder": unique("reminder") }),
    revokeConsent: async () => {
      const consent = await api("POST", "/v1/api/consents", {
        phone_number: story.recipient,
        channels: ["sms"],
        source: "web_form",
      });
      return { [story.consentId]: consent.id };
    },
    deleteWebhookSubscription: async () => {
      const subscription = await api("POST", "/v1/api/webhooks/subscriptions", {
        url: receiver.url,
        events: ["number.hold_expired"],
      });
      return { [story.subscriptionId]: subscription.id };
    },
    retryWebhookDelivery: async () => ({ [story.deliveryId]: await failedDelivery() }),
    disableClient: async () => {
      const client = await api("POST", `/v1/admin/accounts/${p.accountId}/clients`, {
        name: unique("client"),
        scopes: ["calls:read"],
      });
      return { [story.clientId]: client.client_id as string };
    },
    revokeServiceToken: async () => {
      const made = await api("POST", `/v1/admin/accounts/${p.accountId}/service-tokens`, {
        name: unique("token"),
        scopes: ["calls:read"],
      });
      return { [story.tokenId]: made.id };
    },
  };

  beforeAll(async () => {
    p = await startTestPlatform({
      database: "postgres",
      seed: 120,
      serviceEnv: {
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
        WEBHOOK_RETRY_SCHEDULE: "100ms",
        WEBHOOK_TIMEOUT_MS: "2000",
        SANDBOX_CALL_SECONDS: "5",
        SANDBOX_RING_DELAY_MS: "20",
        SANDBOX_RECEIPT_DELAY_MS: "50",
      },
    });
    token = await p.token();
    receiver = await startReceiver();
    failing = await startReceiver({ fallback: 500 });
    document = (await (await p.request("/v1/openapi.json")).json()) as typeof document;
    const search = await api("GET", "/v1/api/numbers/search?capabilities=voice,sms&limit=200");
    numbers = (search.data as { number: string }[]).map((n) => n.number);

    // The shared fixture: the story, live.
    const front = await seat();
    base.set(story.seatId, front.id);
    const alice = await agent();
    base.set(story.agentId, alice.id);
    base.set(story.agent, alice.name as string);
    const ours = await assigned(front.id);
    base.set(story.ours, ours.number);
    base.set(story.numberId, ours.id);
    base.set(story.holdId, (await hold()).id);
    // Inbound calls to the story's number ring under the story's route.
    base.set(story.routeId, (await route(ours.number)).id);
    base.set(story.statusCallbackUrl, receiver.url);
    base.set(story.webhookUrl, receiver.url);
    base.set(story.account, p.accountId);
    const call = await api("POST", "/v1/api/calls/outbound", {
      to: story.callee,
      from: ours.number,
      agent: alice.name,
    });
    base.set(story.callId, call.id);
    const template = await api("POST", "/v1/api/templates", {
      name: unique("reminder"),
      channels: ["sms"],
      body: "Hi {{name}}, your appointment is on {{day}} at {{time}}. Reply STOP to opt out.",
    });
    base.set(story.templateId, template.id);
    const consent = await api("POST", "/v1/api/consents", {
      phone_number: story.recipient,
      channels: ["sms"],
      source: "web_form",
    });
    base.set(story.consentId, consent.id);
    const message = await api("POST", "/v1/api/messages/send", {
      channel: "sms",
      to: story.recipient,
      from: ours.number,
      template_id: template.id,
      variables: { name: "Dana", day: "Tuesday", time: "10:00" },
      consent_id: consent.id,
    });
    base.set(story.messageId, message.id);
    const subscription = await api("POST", "/v1/api/webhooks/subscriptions", {
      url: receiver.url,
      events: ["call.*"],
    });
    base.set(story.subscriptionId, subscription.id);
    base.set(
      story.deliveryId,
      (await api("POST", `/v1/api/webhooks/subscriptions/${subscription.id}/test`)).id,
    );
    const event = await waitFor("an event", async () => {
      const page = await api("GET", "/v1/api/events?limit=1");
      return (page.data as Json[])[0]?.id;
    });
    base.set(story.eventId, event);
    const usage = await waitFor("a usage record", async () => {
      const page = await api("GET", "/v1/api/usage/events?limit=1");
      return (page.data as Json[])[0]?.id;
    });
    base.set(story.usageId, usage);
    const client = await api("POST", `/v1/admin/accounts/${p.accountId}/clients`, {
      name: "support desk",
      scopes: ["calls:read"],
    });
    base.set(story.clientId, client.client_id as string);
    await mkdir(samplesDir, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await rm(samplesDir, { recursive: true, force: true });
    await receiver?.close();
    await failing?.close();
    await p?.stop();
  });

  const substitute = (source: string, values: Map<string, string>) => {
    let text = source;
    // Longest first: no story value is a prefix of another's replacement.
    for (const [from, to] of [...values].sort(([a], [b]) => b.length - a.length)) {
      text = text.replaceAll(from, to);
    }
    return text;
  };

  const env = () => ({
    ...process.env,
    SWITCHBOARD_URL: p.url,
    SWITCHBOARD_TOKEN: token,
    SWITCHBOARD_CLIENT_ID: p.clientId,
    SWITCHBOARD_CLIENT_SECRET: p.clientSecret,
  });

  /** Runs a curl sample; the HTTP status and the body it got. */
  const runCurl = async (source: string) => {
    const out = join(samplesDir, `${randomUUID()}.out`);
    const { stdout } = await run("sh", ["-c", `${source} -sS -o '${out}' -w '%{http_code}'`], {
      env: env(),
    });
    const body = await readFile(out, "utf8").catch(() => "");
    return { status: Number(stdout.trim()), body };
  };

  /** Runs an SDK sample as a module; what it logged. */
  const runSdk = async (source: string) => {
    const file = join(samplesDir, `${randomUUID()}.ts`);
    await writeFile(file, source);
    const added = {
      SWITCHBOARD_URL: p.url,
      SWITCHBOARD_CLIENT_ID: p.clientId,
      SWITCHBOARD_CLIENT_SECRET: p.clientSecret,
    };
    Object.assign(process.env, added);
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      await import(pathToFileURL(file).href);
      return log.mock.calls.map((args) => args[0] as unknown);
    } finally {
      log.mockRestore();
      for (const name of Object.keys(added)) delete process.env[name];
    }
  };

  it("runs every operation's curl and SDK sample with its documented success", async () => {
    const ran: string[] = [];
    const failures: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const success = Number(Object.keys(operation.responses).find((s) => s.startsWith("2")));
        const samples = operation["x-codeSamples"];
        expect(
          samples.map((s) => s.label),
          operation.operationId,
        ).toEqual(["curl", "SDK (TypeScript)"]);
        for (const sample of samples) {
          const name = `${operation.operationId} (${sample.label})`;
          const values = new Map(base);
          values.set(sampleIdempotencyKey, randomUUID());
          for (const [from, to] of Object.entries((await fresh[operation.operationId]?.()) ?? {})) {
            values.set(from, to);
          }
          const source = substitute(sample.source, values);
          try {
            if (sample.lang === "Shell") {
              const reply = await runCurl(source);
              if (reply.status !== success) {
                failures.push(`${name}: ${reply.status} ${reply.body.slice(0, 300)}`);
              }
            } else {
              const logged = await runSdk(source);
              if (logged.length !== 1 || logged[0] === undefined) {
                failures.push(`${name}: logged ${JSON.stringify(logged)}`);
              }
            }
          } catch (error) {
            failures.push(`${name}: ${String(error).slice(0, 300)}`);
          }
          ran.push(`${method.toUpperCase()} ${path} ${sample.label}`);
        }
      }
    }
    expect(failures).toEqual([]);
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length;
    expect(ran).toHaveLength(operations * 2);
  }, 600_000);

  it("type-checks every SDK sample under strict against the SDK's types", async () => {
    const dir = join(samplesDir, "typed");
    await mkdir(dir, { recursive: true });
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        const sdk = operation["x-codeSamples"].find((sample) => sample.lang === "TypeScript")!;
        await writeFile(join(dir, `${operation.operationId}.ts`), sdk.source);
      }
    }
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2022",
          module: "esnext",
          moduleResolution: "bundler",
          // The workspace's SDK sources (the published package carries the same types).
          customConditions: ["source"],
          types: ["node"],
          skipLibCheck: true,
          // Each sample is a program of its own: the same top-level names in each.
          moduleDetection: "force",
          isolatedModules: true,
        },
        include: ["*.ts"],
      }),
    );
    const checked = await run(process.execPath, [tsc, "-p", dir], { cwd: dir }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe("");
  }, 120_000);
});
