import { createSocket, type Socket } from "node:dgram";
import { metricsRegistry } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freeSipPort,
  startSippServer,
  type Baresip,
  type SippRun,
} from "@switchboard/test-support/sip-peers";
import {
  eventually,
  createSipSeat,
  registeredPhone,
  spelledCall,
  startServiceHarness,
  type ServiceHarness,
} from "./harness.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const account = "acct_sip_failover";
const host = "127.0.0.1";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/** A trunk address whose host is gone: what is sent to it is kept, nothing is answered. */
async function deadAddress(port: number) {
  const socket: Socket = createSocket("udp4");
  const received: string[] = [];
  socket.on("message", (data) => received.push(data.toString("latin1")));
  await new Promise<void>((resolve) => socket.bind(port, host, () => resolve()));
  return {
    received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** `sip_trunk_failovers_total` for one reason, as this process counts it. */
async function failovers(reason: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("sip_trunk_failovers_total")!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** `sip_trunk_up` by address, as this process reports it. */
async function trunkUp(): Promise<Record<string, number>> {
  const metric = await metricsRegistry.getSingleMetric("sip_trunk_up")!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.address), v.value]));
}

/** OPTIONS every 0.3 s; out after 2 unanswered, back after 2 answered. */
const pinging = {
  SIP_TRUNK_OPTIONS_INTERVAL_SECONDS: "0.3",
  SIP_TRUNK_OPTIONS_DOWN_AFTER: "2",
  SIP_TRUNK_OPTIONS_UP_AFTER: "2",
};

const header = (message: string, name: string) =>
  new RegExp(`^${name}:\\s*(.*)$`, "im").exec(message)?.[1]?.trim();

/**
 * Trunk failover (RFC 3263 §4.3) with real peers on loopback: SIP_TRUNK_URI lists two
 * addresses, a baresip answers for the seat, SIPp (or a socket that never answers) is each
 * trunk address. The call completes on the second address when the first is dead, refuses with
 * 503, or answers too late (CANCELled, or ACKed and BYEd); OPTIONS pings take a dead address
 * out of `sip_trunk_up` and bring it back when it answers.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "outbound SIP calls failing over between trunk addresses",
  () => {
    let h: ServiceHarness;
    let from: string;
    let first: number;
    let second: number;
    let seatId: string;
    let phone: Baresip;

    /** Two new trunk addresses (a process restarted with them: nothing of an earlier test's INVITEs reaches them). */
    const trunkAddresses = async (env: Record<string, string> = {}, transport = "udp") => {
      first = await freeSipPort();
      second = await freeSipPort();
      const uris = `sip:${host}:${first};transport=${transport}, sip:${host}:${second};transport=${transport}`;
      if (h) await h.restart({ SIP_TRUNK_URI: uris, ...env });
      return uris;
    };

    beforeAll(async () => {
      const sipPort = await freeSipPort();
      const uris = await trunkAddresses();
      h = await startServiceHarness(postgres, {
        VOICE_CARRIER: "sip",
        SIP_LISTEN: `${host}:${sipPort}`,
        SIP_DOMAIN: host,
        SIP_DIGEST_ALGORITHMS: "MD5",
        SIP_TRUNK_URI: uris,
      });
      await h.call(h.client.createAgent, { accountId: account, name: "night-shift" });
      from = await h.assignNumber(account);
      const seat = await createSipSeat(h, account, "desk");
      seatId = seat.id;
      phone = await registeredPhone(h, seat, { host, port: sipPort }, "auto");
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await h?.stop();
    });

    const get = (callId: string) => spelledCall(h, account, callId);
    const place = async (to: string) => {
      const request = { accountId: account, to, from, agent: "night-shift", seatId };
      const placed = await h.call(h.client.createOutboundCall, { ...request, timeoutSeconds: 60 });
      return placed.call!.id;
    };
    /** Places a call and waits for its answer: the call and the milliseconds it took. */
    const placeAnswered = async (to: string) => {
      const started = Date.now();
      const callId = await place(to);
      const call = await eventually(
        () => get(callId),
        (c) => c.status === "in_progress" || c.endedAt !== undefined,
        15_000,
      );
      const tookMs = Date.now() - started;
      expect(call.status, phone.output().slice(-4_000)).toBe("in_progress");
      return { callId, tookMs };
    };
    const trunkRows = async (callId: string) =>
      (
        await h.pool.query<{
          sip_call_id: string;
          invite_branch: string;
          invite_cseq: number;
          flow_port: number;
          state: string;
        }>(
          `SELECT sip_call_id, invite_branch, invite_cseq::int AS invite_cseq, flow_port, state
           FROM call_control.sip_dialogs WHERE call_id = $1 AND leg = 'trunk'`,
          [callId],
        )
      ).rows;
    const finished = async (run: Promise<SippRun>) => {
      const result = await run;
      expect(result.code, result.output).toBe(0);
      return result;
    };
    const ended = (callId: string) =>
      eventually(
        () => get(callId),
        (c) => c.endedAt !== undefined,
        15_000,
      );

    it("completes on the second address within 5 s when the first is dead: the same call, a new branch", async () => {
      await trunkAddresses();
      const timeouts = await failovers("timeout");
      const dead = await deadAddress(first);
      try {
        const answering = await startSippServer({
          scenario: "trunk-answer-bye.xml",
          port: second,
          fill: { hold: "500" },
          timeoutMs: 20_000,
        });
        const { callId, tookMs } = await placeAnswered("+15550109001");
        console.info(`dead first trunk address: answered on the second in ${tookMs} ms`);
        expect(tookMs).toBeLessThan(5_000);
        // It waited for the first address (SIP_TRUNK_FAILOVER_TIMEOUT_MS, 2 s), not Timer B.
        expect(tookMs).toBeGreaterThanOrEqual(2_000);
        expect(await failovers("timeout")).toBe(timeouts + 1);
        const invites = dead.received.filter((m) => m.startsWith("INVITE "));
        expect(invites.length).toBeGreaterThanOrEqual(1);
        const [row] = await trunkRows(callId);
        expect(row).toMatchObject({ flow_port: second, invite_cseq: 2 });
        expect(header(invites[0]!, "Call-ID")).toBe(row!.sip_call_id);
        expect(header(invites[0]!, "CSeq")).toBe("1 INVITE");
        expect(header(invites[0]!, "Via")).not.toContain(row!.invite_branch);
        expect(invites[0]).toMatch(
          new RegExp(`^INVITE sip:\\+15550109001@${host}:${first};user=phone`),
        );
        await finished(answering.done);
        expect(await ended(callId)).toMatchObject({
          status: "completed",
          hangupCause: "normal_clearing",
          hangupSource: "callee",
        });
        expect(await trunkRows(callId)).toHaveLength(1);
      } finally {
        await dead.close();
      }
    });

    it("goes to the second address at once when the first answers 503", async () => {
      await trunkAddresses();
      const refusals = await failovers("status");
      const refusing = await startSippServer({
        scenario: "trunk-refuse.xml",
        port: first,
        fill: { status: "503", reason: "Service Unavailable" },
      });
      const answering = await startSippServer({
        scenario: "trunk-answer-bye.xml",
        port: second,
        fill: { hold: "500" },
        timeoutMs: 20_000,
      });
      const { callId, tookMs } = await placeAnswered("+15550109002");
      console.info(`503 from the first trunk address: answered on the second in ${tookMs} ms`);
      expect(tookMs).toBeLessThan(5_000);
      await finished(refusing.done);
      expect(await failovers("status")).toBe(refusals + 1);
      await finished(answering.done);
      expect(await ended(callId)).toMatchObject({ status: "completed" });
      expect(await trunkRows(callId)).toMatchObject([{ flow_port: second, state: "terminated" }]);
    });

    it("goes to the second address at once when the first refuses its TCP connection", async () => {
      await trunkAddresses({}, "tcp");
      const transportErrors = await failovers("transport");
      // Nothing listens on the first address's TCP port: the connection is refused.
      const answering = await startSippServer({
        scenario: "trunk-answer-bye.xml",
        port: second,
        transport: "t1",
        fill: { hold: "500" },
        timeoutMs: 20_000,
      });
      const { callId, tookMs } = await placeAnswered("+15550109005");
      console.info(
        `TCP refused by the first trunk address: answered on the second in ${tookMs} ms`,
      );
      // At once: no wait for SIP_TRUNK_FAILOVER_TIMEOUT_MS (2 s).
      expect(tookMs).toBeLessThan(2_000);
      expect(await failovers("transport")).toBe(transportErrors + 1);
      expect(await trunkRows(callId)).toMatchObject([{ flow_port: second, invite_cseq: 2 }]);
      await finished(answering.done);
      expect(await ended(callId)).toMatchObject({ status: "completed" });
    });

    /**
     * The first address answers `scenario` late (after the call moved on); the second answers and
     * hangs up after `holdMs`. Returns once the first's scenario ended, the call still live.
     */
    const lateFirstAddress = async (scenario: string, holdMs: number, to: string) => {
      await trunkAddresses();
      const late = await startSippServer({
        scenario,
        port: first,
        fill: { pause: "3000" },
        timeoutMs: 20_000,
      });
      const answering = await startSippServer({
        scenario: "trunk-answer-bye.xml",
        port: second,
        fill: { hold: String(holdMs) },
        timeoutMs: 20_000,
      });
      const { callId } = await placeAnswered(to);
      await finished(late.done);
      expect((await get(callId)).status).toBe("in_progress");
      return { callId, answering };
    };

    it("CANCELs the first address when it rings after the call moved on", async () => {
      // The first address's 180 met a CANCEL (its scenario ends with the ACK of its 487).
      const { callId, answering } = await lateFirstAddress(
        "trunk-ring-late.xml",
        2_500,
        "+15550109003",
      );
      await finished(answering.done);
      expect(await ended(callId)).toMatchObject({ status: "completed" });
      expect(await trunkRows(callId)).toMatchObject([{ flow_port: second }]);
    });

    it("ACKs and BYEs a late 200 from the first address: the call keeps its one trunk leg", async () => {
      // The first address's 200 was ACKed, then BYEd (its scenario ends with the 200 to the BYE).
      const { callId, answering } = await lateFirstAddress(
        "trunk-answer-silent.xml",
        3_000,
        "+15550109004",
      );
      expect(await trunkRows(callId)).toMatchObject([{ flow_port: second, state: "confirmed" }]);
      await finished(answering.done);
      expect(await ended(callId)).toMatchObject({ status: "completed" });
    });

    it("fails the call with the last address's 503 when every address refuses", async () => {
      await trunkAddresses();
      const refusals = await Promise.all(
        [first, second].map((port) =>
          startSippServer({
            scenario: "trunk-refuse.xml",
            port,
            fill: { status: "503", reason: "Service Unavailable" },
          }),
        ),
      );
      const callId = await place("+15550109005");
      for (const refusal of refusals) await finished(refusal.done);
      expect(await ended(callId)).toMatchObject({
        status: "failed",
        hangupCause: "network_error",
        hangupSource: "callee",
        sipCode: 503,
      });
    });

    it("OPTIONS pings take a dead address out (sip_trunk_up 0) and bring it back when it answers", async () => {
      await trunkAddresses(pinging);
      const firstKey = `${host}:${first}`;
      const secondKey = `${host}:${second}`;
      // Nothing listens on either address: both are taken out.
      const down = await eventually(
        trunkUp,
        (s) => s[firstKey] === 0 && s[secondKey] === 0,
        10_000,
      );
      expect(down).toMatchObject({ [firstKey]: 0, [secondKey]: 0 });
      // The first comes back (SIPp answers 10 pings, then exits): up, then down again.
      const revived = await startSippServer({
        scenario: "trunk-options.xml",
        port: first,
        calls: 10,
        timeoutMs: 20_000,
      });
      const back = await eventually(trunkUp, (s) => s[firstKey] === 1, 10_000);
      expect(back).toMatchObject({ [firstKey]: 1, [secondKey]: 0 });
      await finished(revived.done);
      const gone = await eventually(trunkUp, (s) => s[firstKey] === 0, 10_000);
      expect(gone).toMatchObject({ [firstKey]: 0, [secondKey]: 0 });
    });

    it("sends a new call straight to the address that answers, skipping one the pings took out", async () => {
      await trunkAddresses(pinging);
      const dead = await deadAddress(first);
      const answering = await startSippServer({
        scenario: "trunk-options-answer-bye.xml",
        port: second,
        calls: 100_000,
        fill: { hold: "500" },
        timeoutMs: 60_000,
      });
      try {
        const firstKey = `${host}:${first}`;
        const secondKey = `${host}:${second}`;
        await eventually(trunkUp, (s) => s[firstKey] === 0 && s[secondKey] === 1, 10_000);
        const { callId, tookMs } = await placeAnswered("+15550109006");
        console.info(`first trunk address out: answered on the second in ${tookMs} ms`);
        // One INVITE, to the second address: no failover, so no wait for the first.
        expect(await trunkRows(callId)).toMatchObject([{ flow_port: second, invite_cseq: 1 }]);
        expect(dead.received.filter((m) => m.startsWith("INVITE "))).toEqual([]);
        expect(dead.received.some((m) => m.startsWith("OPTIONS "))).toBe(true);
        expect(await ended(callId)).toMatchObject({
          status: "completed",
          hangupSource: "callee",
        });
      } finally {
        await answering.stop();
        await dead.close();
      }
    });
  },
);
