import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type CallPlatform } from "@switchboard/test-support/fixtures/calls";
import { freeSipPort, runSipp, type Baresip } from "@switchboard/test-support/sip-peers";
import {
  createSeat as createSipSeat,
  phoneSaw,
  registerPhone,
  sipListener,
  sippPassed,
  sippPhone,
  startSipPlatform,
  suiteApi,
  type SipSuiteSeat as Seat,
} from "@switchboard/test-support/fixtures/sip";
import {
  answerInbound,
  callWhen,
  getCall,
  inboundCallTo,
  inboundCalls,
  sipDialog,
} from "@switchboard/test-support/fixtures/sip-calls";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const host = "127.0.0.1";

/**
 * Inbound calls over SIP (docs/api.md "Voice over SIP"): the platform runs VOICE_CARRIER=sip;
 * the carrier's trunk is SIPp on loopback sending INVITEs to the platform's DIDs (one scenario
 * per test, from 127.0.0.1, the trunk's address and so the only source allowed); the seat's
 * phone is a real baresip answering automatically. Everything else goes through the gateway.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "inbound calls over SIP",
  () => {
    let p: CallPlatform;
    let token: string;
    let sipPort: number;
    let phone: Baresip;
    let ringingPhone: Baresip;
    let answering: Seat;
    /** DIDs routed to the answering seat, one per test (a call is found by its DID). */
    const dids: string[] = [];
    let offlineDid: string;
    let ringingDid: string;
    let hangingUp: Seat;
    let hangingUpDid: string;
    let hangingUpPhone: Baresip | undefined;
    let unroutedDid: string;

    const api = suiteApi(
      () => p,
      () => token,
    );
    const createSeat = (name: string) => createSipSeat(api, name);
    const route = async (name: string, numbers: string[], seat: Seat) => {
      const created = await api("POST", "/api/routes", {
        name,
        numbers,
        agent: "alice",
        seat_id: seat.id,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    };

    beforeAll(async () => {
      ({ p, token } = await startSipPlatform({
        seed: 40,
        // The trunk is 127.0.0.1: its INVITEs (and only those) are inbound calls.
        trunkPort: await freeSipPort(),
        env: { INBOUND_RING_TIMEOUT_SECONDS: "30" },
      }));
      sipPort = sipListener(p, host).port;
      answering = await createSeat("desk answering");
      const offline = await createSeat("desk offline");
      const ringing = await createSeat("desk ringing");
      for (let i = 0; i < 8; i++) dids.push(await p.assignNumber(token));
      offlineDid = await p.assignNumber(token);
      unroutedDid = await p.assignNumber(token);
      ringingDid = await p.assignNumber(token);
      await route("sip line", dids, answering);
      await route("offline line", [offlineDid], offline);
      await route("ringing line", [ringingDid], ringing);
      hangingUp = await createSeat("desk hanging up");
      hangingUpDid = await p.assignNumber(token);
      await route("hanging up line", [hangingUpDid], hangingUp);
      const register = (seat: Seat, answermode: "auto" | "manual") =>
        registerPhone(api, seat, { registrar: sipListener(p, host), answermode });
      [phone, ringingPhone, hangingUpPhone] = await Promise.all([
        register(answering, "auto"),
        register(ringing, "manual"),
        register(hangingUp, "auto"),
      ]);
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await ringingPhone?.stop();
      await hangingUpPhone?.stop();
      await p?.stop();
    });

    const trunk = (
      scenario: string,
      did: string,
      extra: { fill?: Record<string, string>; localHost?: string } = {},
    ) =>
      runSipp({
        scenario,
        target: { host, port: sipPort },
        keys: { did },
        timeoutMs: 45_000,
        ...extra,
      });
    /** Once the trunk's leg of the call is ACKed (its dialog confirmed both ways). */
    const trunkAcked = (id: string) =>
      eventually(
        () => sipDialog(p, id, "trunk"),
        (dialog) => dialog?.acked === true,
        15_000,
      );

    it("rings, the API answer INVITEs the phone with the trunk's offer and the trunk gets the phone's answer; the trunk's BYE ends the call", async () => {
      const did = dids[0]!;
      const run = trunk("inbound-answer.xml", did, { fill: { after_ack: "trunk_bye" } });
      const ringing = await inboundCallTo(api, did);
      expect(ringing).toMatchObject({
        direction: "inbound",
        status: "ringing",
        from: "+442071838750",
      });
      const answered = await answerInbound(api, ringing!.id);
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      await sippPassed(run);
      // The phone's INVITE carried the trunk's offer.
      expect(await phoneSaw(phone, "o=trunk-offer")).toMatch(
        /INVITE sip:[^\n]*\n(?:[^\n]*\n)*?[^\n]*o=trunk-offer/,
      );
      const done = await callWhen(api, ringing!.id);
      expect(done).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "caller",
        sip_code: 200,
      });
      await phoneSaw(phone, "BYE sip:");
      const { rows } = await p.db.query<{ leg: string; state: string; acked: boolean }>(
        `SELECT leg, state, acked FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
        [ringing!.id],
      );
      expect(rows).toEqual([
        { leg: "phone", state: "terminated", acked: true },
        { leg: "trunk", state: "terminated", acked: true },
      ]);
    });

    it("a caller who withholds the number (anonymous, Privacy: id): rings as `anonymous`, answered and completed; the P-Asserted-Identity kept, never shown", async () => {
      const did = dids[7]!;
      const run = trunk("inbound-anonymous.xml", did);
      const ringing = await inboundCallTo(api, did);
      expect(ringing).toMatchObject({ direction: "inbound", status: "ringing", from: "anonymous" });
      const answered = await answerInbound(api, ringing!.id);
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      expect(answered.body.from).toBe("anonymous");
      await sippPassed(run);
      const done = await callWhen(api, ringing!.id);
      expect(done).toMatchObject({
        status: "completed",
        from: "anonymous",
        hangup_cause: "normal_clearing",
        hangup_source: "caller",
      });
      const { rows } = await p.db.query<{ asserted_identity: string }>(
        `SELECT asserted_identity FROM call_control.calls WHERE id = $1`,
        [ringing!.id],
      );
      expect(rows[0]!.asserted_identity).toBe("<sip:+442071838750@127.0.0.1;user=phone>");
      // Neither the API nor the call's events (what webhooks deliver) name the real caller.
      const events = await p.db.query<{ type: string; data: unknown }>(
        `SELECT type, data FROM call_control.outbox WHERE resource_id = $1 ORDER BY sequence`,
        [ringing!.id],
      );
      expect(events.rows.map((e) => e.type)).toEqual(
        expect.arrayContaining(["call.incoming", "call.answered", "call.completed"]),
      );
      const shown = JSON.stringify([await getCall(api, ringing!.id), events.rows]);
      expect(shown).toContain('"from":"anonymous"');
      expect(shown).not.toContain("2071838750");
    });

    it("offers the caller the phone's early media: its 183 with SDP reaches the trunk before the 200, and the call records early_media", async () => {
      const seat = await createSeat("desk early media");
      const did = await p.assignNumber(token);
      await route("early media line", [did], seat);
      const earlyPhone = await sippPhone(p, seat, "phone-early-media.xml", {
        fill: { ring: "2000" },
        timeoutMs: 30_000,
      });
      const run = trunk("inbound-early-media.xml", did);
      const ringing = await inboundCallTo(api, did);
      expect((await answerInbound(api, ringing!.id)).status).toBe(200);
      const early = await eventually(
        () => getCall(api, ringing!.id),
        (c) => c.early_media,
        10_000,
      );
      expect(early).toMatchObject({ status: "in_progress", early_media: true });
      const result = await sippPassed(run);
      expect(result.logs.find((line) => line.startsWith("early="))).toMatch(
        /^early=o=phone-early 1 1/,
      );
      const phoneRun = await earlyPhone.done;
      expect(phoneRun.code, phoneRun.output).toBe(0);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "completed",
        hangup_source: "caller",
        early_media: true,
      });
    });

    it("a DID without + in the Request-URI; an API hangup after the answer BYEs the trunk", async () => {
      const did = dids[1]!;
      const run = trunk("inbound-answer.xml", did.slice(1), {
        fill: { after_ack: "platform_bye" },
      });
      const ringing = await inboundCallTo(api, did);
      expect((await answerInbound(api, ringing!.id)).status).toBe(200);
      await trunkAcked(ringing!.id);
      const hungUp = await api("POST", `/api/calls/${ringing!.id}/hangup`);
      expect(hungUp.status).toBe(200);
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "callee",
        sip_code: 200,
      });
    });

    it("a DID with no route: 404, the call rejected / no_route", async () => {
      await sippPassed(trunk("inbound-refused.xml", unroutedDid, { fill: { status: "404" } }));
      const call = await inboundCallTo(api, unroutedDid);
      expect(call).toMatchObject({
        status: "rejected",
        hangup_cause: "no_route",
        hangup_source: "platform",
        sip_code: 404,
      });
    });

    it("a DID no account has: 404 and no call", async () => {
      const unknown = "+15550199999";
      await sippPassed(trunk("inbound-refused.xml", unknown, { fill: { status: "404" } }));
      const calls = await inboundCalls(api);
      expect(calls.some((c) => c.to === unknown)).toBe(false);
    });

    it("an INVITE whose Content-Length runs past its datagram: 400 and no call (RFC 3261 §18.3)", async () => {
      const did = dids[6]!;
      const run = await sippPassed(trunk("inbound-overlong.xml", did));
      expect(run.code).toBe(0);
      const calls = await inboundCalls(api);
      expect(calls.some((c) => c.to === did)).toBe(false);
      const { rows } = await p.db.query(`SELECT 1 FROM call_control.calls WHERE to_number = $1`, [
        did,
      ]);
      expect(rows).toEqual([]);
    });

    it("an INVITE from a source not allowed: 403 and no call", async () => {
      const did = dids[2]!;
      await sippPassed(
        trunk("inbound-refused.xml", did, { fill: { status: "403" }, localHost: "127.0.0.2" }),
      );
      const calls = await inboundCalls(api);
      expect(calls.some((c) => c.to === did)).toBe(false);
    });

    it("not answered within the ring timeout: 480 to the trunk, no_answer / timeout", async () => {
      const did = dids[3]!;
      const run = trunk("inbound-refused.xml", did, { fill: { status: "480" } });
      const ringing = await inboundCallTo(api, did);
      // The ring timeout falls due now (its length is the setting's business, not this test's).
      await p.db.query(
        "UPDATE call_control.scheduled_actions SET due_at = now() WHERE call_id = $1 AND kind = 'call.timeout'",
        [ringing!.id],
      );
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "no_answer",
        hangup_cause: "timeout",
        hangup_source: "platform",
        sip_code: 480,
      });
    });

    it("the trunk's CANCEL while ringing: 200, then 487 to the INVITE; the call canceled", async () => {
      const did = dids[4]!;
      const run = trunk("inbound-cancel.xml", did);
      const ringing = await inboundCallTo(api, did);
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "canceled",
        hangup_cause: "originator_cancel",
        hangup_source: "caller",
        sip_code: 487,
      });
    });

    it("answered for a seat whose phone is not registered: 480 to the trunk, failed / seat_unavailable", async () => {
      const run = trunk("inbound-refused.xml", offlineDid, { fill: { status: "480" } });
      const ringing = await inboundCallTo(api, offlineDid);
      expect((await answerInbound(api, ringing!.id)).status).toBe(200);
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "failed",
        hangup_cause: "seat_unavailable",
        hangup_source: "platform",
        sip_code: 480,
        answered_at: null,
      });
    });

    it("answered, but the seat's phone keeps ringing: it is CANCELled, 480 to the trunk, no_answer", async () => {
      const run = trunk("inbound-refused.xml", ringingDid, { fill: { status: "480" } });
      const ringing = await inboundCallTo(api, ringingDid);
      expect((await answerInbound(api, ringing!.id)).status).toBe(200);
      await phoneSaw(ringingPhone, "o=trunk-offer");
      // The phone's ringing bound (32 s) falls due now.
      await eventually(
        async () =>
          (
            await p.db.query(
              `UPDATE call_control.scheduled_actions SET due_at = now()
              WHERE call_id = $1 AND kind = 'sip.inbound_phone_timeout'`,
              [ringing!.id],
            )
          ).rowCount,
        (count) => count === 1,
        10_000,
      );
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "no_answer",
        hangup_cause: "no_answer",
        hangup_source: "callee",
        sip_code: 408,
        answered_at: null,
      });
      await phoneSaw(ringingPhone, "CANCEL sip:");
    });

    it("declined through the API while ringing: 603 to the trunk, rejected / call_rejected", async () => {
      const did = dids[5]!;
      const run = trunk("inbound-refused.xml", did, { fill: { status: "603" } });
      const ringing = await inboundCallTo(api, did);
      await eventually(
        () => sipDialog(p, ringing!.id, "trunk"),
        (dialog) => dialog !== undefined,
        10_000,
      );
      expect((await api("POST", `/api/calls/${ringing!.id}/hangup`)).status).toBe(200);
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "rejected",
        hangup_cause: "call_rejected",
        hangup_source: "callee",
        sip_code: 603,
      });
    });

    it("the agent hangs up the phone after the answer: the trunk gets BYE, completed / callee", async () => {
      const run = trunk("inbound-answer.xml", hangingUpDid, {
        fill: { after_ack: "platform_bye" },
      });
      const ringing = await inboundCallTo(api, hangingUpDid);
      expect((await answerInbound(api, ringing!.id)).status).toBe(200);
      await trunkAcked(ringing!.id);
      // On SIGTERM baresip hangs up its calls (BYE) before it unregisters.
      const stopping = hangingUpPhone!;
      hangingUpPhone = undefined;
      await stopping.stop();
      await sippPassed(run);
      expect(await callWhen(api, ringing!.id)).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "callee",
        sip_code: 200,
      });
    });
  },
);
