import { createLogger, metricsRegistry } from "@switchboard/kit";
import { freeSipPort } from "@switchboard/test-support/sip-peers";
import { eventually } from "@switchboard/test-support/waiting";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTrunkTargets, type TrunkTargets } from "../src/carrier/sip/trunk-targets.js";
import type { TrunkDns } from "../src/carrier/sip/trunk-resolver.js";
import type { SipTrunk } from "../src/sip/sip-settings.js";
import { startSipEndpoint, type SipEndpoint } from "../src/sip/stack/endpoint.js";
import { responseTo } from "../src/sip/stack/message.js";
import { parseTrunkUris } from "../src/sip/trunk-uris.js";

const logger = createLogger("sip-trunk-targets-test", { level: "silent" });

const trunkOf = (uris: string, overrides: Partial<SipTrunk> = {}): SipTrunk => ({
  uris: parseTrunkUris(uris)!,
  username: undefined,
  password: undefined,
  failoverTimeoutMs: 2_000,
  optionsIntervalMs: 0,
  downAfter: 2,
  upAfter: 1,
  resolveIntervalMs: 60_000,
  ...overrides,
});

/** `down` was taken out by the OPTIONS pings: calls try `up` first, `sip_trunk_up` says so. */
async function expectTakenOut(targets: TrunkTargets, down: number, up: number) {
  const keys = await eventually(
    async () => targets.forCall().map((target) => target.key),
    (order) => order[0] === `127.0.0.1:${up}`,
    5_000,
  );
  expect(keys).toEqual([`127.0.0.1:${up}`, `127.0.0.1:${down}`]);
  const metric = await metricsRegistry.getSingleMetric("sip_trunk_up")!.get();
  expect(
    Object.fromEntries(metric.values.map((v) => [String(v.labels.address), v.value])),
  ).toMatchObject({ [`127.0.0.1:${down}`]: 0, [`127.0.0.1:${up}`]: 1 });
}

/**
 * The trunk's addresses as calls see them: the OPTIONS verdicts of real endpoints on loopback
 * (ours pinging, another answering OPTIONS 200 as the SIP stack does), and names resolved again
 * as their TTL runs out (the DNS injected, the clock faked).
 */
describe("the trunk's addresses for a new call", () => {
  let ours: SipEndpoint;
  let peer: SipEndpoint;

  beforeAll(async () => {
    const start = () => startSipEndpoint({ host: "127.0.0.1", port: 0, logger, handlers: {} });
    ours = await start();
    peer = await start();
  });
  afterAll(async () => {
    await ours?.stop();
    await peer?.stop();
  });

  it("puts an address the OPTIONS pings took out after one that answers, and says so in sip_trunk_up", async () => {
    const dead = await freeSipPort();
    const alive = peer.transport.port;
    const targets = createTrunkTargets({
      trunk: trunkOf(`sip:127.0.0.1:${dead},sip:127.0.0.1:${alive}`, { optionsIntervalMs: 200 }),
      endpoint: ours,
      logger,
      ipv6: false,
    });
    try {
      // Listed first, but out: calls try it last (still, when nothing else is left).
      await expectTakenOut(targets, dead, alive);
    } finally {
      targets.stop();
    }
    // Stopped, it reports nothing any more.
    const after = await metricsRegistry.getSingleMetric("sip_trunk_up")!.get();
    expect(after.values.map((v) => v.labels.address)).not.toContain(`127.0.0.1:${dead}`);
  });

  it("pings a TCP address over a connection it may open (reaches), and takes out one refusing it", async () => {
    const refusing = await freeSipPort();
    const heard: { transport: string; uri: string; contact: string | undefined }[] = [];
    const tcpPeer = await startSipEndpoint({
      host: "127.0.0.1",
      port: 0,
      logger,
      handlers: {
        OPTIONS: async (request, context) => {
          const [first] = request.headers.contact ?? [];
          const contact = typeof first === "string" ? first : first?.uri;
          heard.push({ transport: context.flow.transport, uri: request.uri, contact });
          context.respond(responseTo(request, 200));
        },
      },
    });
    const alive = tcpPeer.transport.port;
    const holder: { targets?: TrunkTargets } = {};
    const dialing = await startSipEndpoint({
      host: "127.0.0.1",
      port: 0,
      logger,
      handlers: {},
      dialable: (flow) => holder.targets?.reaches(flow) ?? false,
    });
    const targets = createTrunkTargets({
      trunk: trunkOf(
        `sip:127.0.0.1:${refusing};transport=tcp,sip:127.0.0.1:${alive};transport=tcp`,
        { optionsIntervalMs: 200 },
      ),
      endpoint: dialing,
      logger,
      ipv6: false,
    });
    holder.targets = targets;
    try {
      const tcp = (port: number) => ({ transport: "tcp" as const, address: "127.0.0.1", port });
      expect(targets.reaches(tcp(alive))).toBe(true);
      expect(targets.reaches({ ...tcp(alive), transport: "udp" })).toBe(false);
      expect(targets.reaches(tcp(alive + 1 === refusing ? alive + 2 : alive + 1))).toBe(false);
      await expectTakenOut(targets, refusing, alive);
      // The pings went over TCP, our Contact saying so.
      await eventually(
        async () => heard.length,
        (count) => count > 0,
        5_000,
      );
      expect(heard[0]).toEqual({
        transport: "tcp",
        uri: `sip:127.0.0.1:${alive};transport=tcp`,
        contact: `sip:switchboard@${dialing.sentBy("tcp")};transport=tcp`,
      });
    } finally {
      targets.stop();
      await dialing.stop();
      await tcpPeer.stop();
    }
  });

  it("resolves a name again when its TTL runs out, and keeps the last answer while the DNS fails", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let answer: { address: string; ttl: number }[] | undefined = [
        { address: "192.0.2.1", ttl: 30 },
      ];
      const asked: string[] = [];
      const dns: TrunkDns = {
        resolveSrv: () => Promise.reject(Object.assign(new Error("none"), { code: "ENODATA" })),
        resolve4: (name) => {
          asked.push(name);
          return answer
            ? Promise.resolve(answer)
            : Promise.reject(Object.assign(new Error("timeout"), { code: "ETIMEOUT" }));
        },
        resolve6: () => Promise.resolve([]),
        lookup: () => Promise.reject(Object.assign(new Error("none"), { code: "ENOTFOUND" })),
      };
      const targets = createTrunkTargets({
        trunk: trunkOf("sip:trunk.example.net:5070"),
        endpoint: ours,
        logger,
        ipv6: false,
        dns,
      });
      // Before the first answer, the name is its own target.
      expect(targets.forCall().map((t) => t.key)).toEqual(["trunk.example.net:5070"]);
      await targets.ready;
      expect(targets.forCall().map((t) => t.key)).toEqual(["192.0.2.1:5070"]);
      answer = [{ address: "192.0.2.2", ttl: 300 }];
      await vi.advanceTimersByTimeAsync(29_000);
      expect(targets.forCall().map((t) => t.key)).toEqual(["192.0.2.1:5070"]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(targets.forCall().map((t) => t.key)).toEqual(["192.0.2.2:5070"]);
      // The DNS fails: the last answer stays, and it is asked again 10 s later.
      answer = undefined;
      await vi.advanceTimersByTimeAsync(60_000);
      expect(targets.forCall().map((t) => t.key)).toEqual(["192.0.2.2:5070"]);
      answer = [{ address: "192.0.2.3", ttl: 300 }];
      await vi.advanceTimersByTimeAsync(10_000);
      expect(targets.forCall().map((t) => t.key)).toEqual(["192.0.2.3:5070"]);
      // TTL 300 s, but SIP_TRUNK_RESOLVE_SECONDS (60) is the longest an answer is kept.
      const before = asked.length;
      await vi.advanceTimersByTimeAsync(60_000);
      expect(asked.length).toBe(before + 1);
      targets.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
