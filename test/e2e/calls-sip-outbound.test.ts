import { createHash, X509Certificate } from "node:crypto";
import { createSocket } from "node:dgram";
import { compactVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  PUBLIC_URL,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";
import { freeSipPort, startSippServer, type Baresip } from "@switchboard/test-support/sip-peers";
import {
  createSeat as createSipSeat,
  phoneSaw,
  seatWithPhone,
  sipListener,
  sippLogged as logged,
  sippPassed,
  sippPhone as sippPhoneOf,
  startSipPlatform,
  suiteApi,
  type SipSuiteSeat as Seat,
} from "@switchboard/test-support/fixtures/sip";
import {
  callWhen,
  getCall,
  placeOutbound,
  sipDialog,
} from "@switchboard/test-support/fixtures/sip-calls";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const host = "127.0.0.1";
const md5 = (text: string) => createHash("md5").update(text).digest("hex");

/**
 * Outbound calls over SIP (docs/api.md "Voice over SIP"): the platform runs VOICE_CARRIER=sip
 * with a trunk that is SIPp on loopback (one scenario per test) and seats whose phones are real
 * baresips registered with the platform. Everything goes through the gateway's API.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "outbound calls over SIP (third-party call control)",
  () => {
    let p: CallPlatform;
    let token: string;
    let trunkPort: number;
    let from: string;
    let answering: { seat: Seat; phone: Baresip };
    let ringing: { seat: Seat; phone: Baresip };
    let offline: Seat;

    const api = suiteApi(
      () => p,
      () => token,
    );
    const createSeat = (name: string) => createSipSeat(api, name);
    const phoneFor = (name: string, answermode: "auto" | "manual") =>
      seatWithPhone(api, name, { registrar: sipListener(p, host), answermode });

    beforeAll(async () => {
      trunkPort = await freeSipPort();
      ({ p, token } = await startSipPlatform({
        seed: 12,
        trunkPort,
        env: { SIP_TRUNK_USERNAME: "trunkuser", SIP_TRUNK_PASSWORD: "trunksecret" },
      }));
      from = await p.assignNumber(token);
      [answering, ringing] = await Promise.all([
        phoneFor("desk answering", "auto"),
        phoneFor("desk ringing", "manual"),
      ]);
      offline = await createSeat("desk offline");
    }, 60_000);
    afterAll(async () => {
      await answering?.phone.stop();
      await ringing?.phone.stop();
      await p?.stop();
    });

    const place = (seat: Seat, to: string, extra: { timeout_seconds?: number } = {}) =>
      placeOutbound(api, { to, from, seat, ...extra });
    const statusBecomes = (id: string, status: string, timeoutMs = 15_000) =>
      callWhen(api, id, (c) => c.status === status, timeoutMs);
    const ended = (id: string) => callWhen(api, id, undefined, 20_000);
    const trunk = (scenario: string, fill: Record<string, string> = {}, timeoutMs = 20_000) =>
      startSippServer({ scenario, port: trunkPort, fill, timeoutMs });
    /** The CSeq of the platform's last request on the call's phone leg. */
    const phoneCseq = async (id: string) => (await sipDialog(p, id, "phone"))?.local_cseq;

    it("fails a call whose seat has no registered phone: failed / seat_unavailable", async () => {
      const call = await place(offline, "+15550107001");
      const done = await ended(call.id);
      expect(done).toMatchObject({
        status: "failed",
        hangup_cause: "seat_unavailable",
        hangup_source: "platform",
        sip_code: null,
      });
    });

    it("rings the phone, then the trunk with the phone's SDP and a PASSporT that verifies; the trunk's answer reaches the phone; an API hangup BYEs both", async () => {
      const sipp = await trunk("trunk-answer.xml");
      const call = await place(answering.seat, "+15550107002");
      const live = await statusBecomes(call.id, "in_progress");
      expect(live.status, answering.phone.output().slice(-6_000)).toBe("in_progress");
      // The phone was ACKed with a held answer at once; the trunk's answer came in a re-INVITE.
      const output = await phoneSaw(answering.phone, "o=trunk-answer");
      expect(output).toMatch(/INVITE sip:[^\n]*\n(?:[^\n]*\n)*?[^\n]*o=trunk-answer/);

      const hungUp = await api("POST", `/api/calls/${call.id}/hangup`);
      expect(hungUp.status).toBe(200);
      const run = await sippPassed(sipp.done);
      const done = await ended(call.id);
      expect(done).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "caller",
        sip_code: 200,
      });
      expect(logged(run, "ruri")).toBe(`sip:+15550107002@${host}:${trunkPort};user=phone`);
      expect(logged(run, "from")).toMatch(new RegExp(`^sip:\\${from}@`));
      expect(logged(run, "info")).toBe(`${PUBLIC_URL}/.well-known/stir-shaken/cert.pem`);
      const identity = logged(run, "identity")!;
      expect(identity).toBe(call.stir_shaken!.identity);
      const pem = await (await fetch(`${p.url}/.well-known/stir-shaken/cert.pem`)).text();
      const { payload } = await compactVerify(identity, new X509Certificate(pem).publicKey, {
        algorithms: ["ES256"],
      });
      const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
      expect(claims).toMatchObject({ dest: { tn: ["15550107002"] }, orig: { tn: from.slice(1) } });
      await phoneSaw(answering.phone, "BYE sip:");
      const { rows } = await p.db.query<{ leg: string; state: string }>(
        `SELECT leg, state FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
        [call.id],
      );
      expect(rows).toEqual([
        { leg: "phone", state: "terminated" },
        { leg: "trunk", state: "terminated" },
      ]);
    });

    it("lets the trunk ring past 64·T1: the phone's 200 is ACKed at once, the trunk's answer reaches it in a re-INVITE (RFC 3725 flow IV)", async () => {
      // 60 s, as PSTN calls ring: far past the 32 s a phone waits for the ACK of its 200.
      const ringMs = 60_000;
      const sipp = await trunk("trunk-answer-late.xml", { ring: String(ringMs) }, ringMs + 20_000);
      const call = await place(answering.seat, "+15550107011", { timeout_seconds: 90 });
      await statusBecomes(call.id, "ringing");
      const phoneLeg = () => sipDialog(p, call.id, "phone");
      expect(await eventually(phoneLeg, (leg) => leg?.acked === true)).toMatchObject({
        state: "confirmed",
        acked: true,
        local_cseq: 1,
      });
      const live = await statusBecomes(call.id, "in_progress", ringMs + 10_000);
      expect(live.status, answering.phone.output().slice(-6_000)).toBe("in_progress");
      const output = await phoneSaw(answering.phone, "o=trunk-answer");
      expect(output).toMatch(/INVITE sip:[^\n]*\n(?:[^\n]*\n)*?[^\n]*o=trunk-answer/);
      expect(await eventually(phoneLeg, (leg) => leg?.local_cseq === 2)).toMatchObject({
        state: "confirmed",
        local_cseq: 2,
      });
      expect((await api("POST", `/api/calls/${call.id}/hangup`)).status).toBe(200);
      await sippPassed(sipp.done);
      const done = await ended(call.id);
      expect(done).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "caller",
        early_media: false,
      });
      const rang = Date.parse(done.answered_at!) - Date.parse(done.created_at);
      expect(rang).toBeGreaterThanOrEqual(ringMs);
    }, 120_000);

    it("passes the trunk's early media (183 with SDP) to the phone before the answer, and records early_media", async () => {
      const sipp = await trunk("trunk-early-media.xml", { ring: "4000" });
      const call = await place(answering.seat, "+15550107012");
      // The phone gets the 183's SDP in a re-INVITE while the call still rings.
      await phoneSaw(answering.phone, "o=trunk-early");
      expect((await getCall(api, call.id)).status).toBe("ringing");
      const early = await eventually(
        () => getCall(api, call.id),
        (c) => c.early_media,
      );
      expect(early).toMatchObject({ status: "ringing", early_media: true });
      await statusBecomes(call.id, "in_progress");
      // The 200's SDP is the 183's: the phone has it, no second re-INVITE.
      expect(await phoneCseq(call.id)).toBe(2);
      expect((await api("POST", `/api/calls/${call.id}/hangup`)).status).toBe(200);
      await sippPassed(sipp.done);
      expect(await ended(call.id)).toMatchObject({ status: "completed", early_media: true });
    });

    /** A new seat whose phone is SIPp running `scenario` (registered as the seat first). */
    const sippPhone = async (name: string, scenario: string, fill: Record<string, string> = {}) => {
      const seat = await createSeat(name);
      return { seat, phone: await sippPhoneOf(p, seat, scenario, { fill, timeoutMs: 20_000 }) };
    };

    it("fails the call when the phone refuses the trunk's answer in the re-INVITE: failed / network_error, nothing billable, both legs BYEd", async () => {
      const { seat, phone } = await sippPhone("desk refusing", "phone-refuse-reinvite.xml", {
        status: "488",
      });
      const sipp = await trunk("trunk-answer-late.xml", { ring: "0" });
      const call = await place(seat, "+15550107013");
      await sippPassed(sipp.done);
      await sippPassed(phone.done);
      expect(await ended(call.id)).toMatchObject({
        status: "failed",
        hangup_cause: "network_error",
        hangup_source: "platform",
        sip_code: 488,
        answered_at: null,
      });
    });

    it("tries the re-INVITE again after 2.1–4 s when the phone answers 491 (RFC 3261 §14.1)", async () => {
      const { seat, phone } = await sippPhone("desk crossing", "phone-glare.xml");
      const sipp = await trunk("trunk-answer-late.xml", { ring: "0" });
      const call = await place(seat, "+15550107014");
      await statusBecomes(call.id, "in_progress");
      const cseq = await eventually(
        () => phoneCseq(call.id),
        (n) => n === 3,
        10_000,
      );
      expect(cseq).toBe(3);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await getCall(api, call.id)).status).toBe("in_progress");
      expect((await api("POST", `/api/calls/${call.id}/hangup`)).status).toBe(200);
      await sippPassed(phone.done);
      await sippPassed(sipp.done);
      expect(await ended(call.id)).toMatchObject({ status: "completed", sip_code: 200 });
    });

    it("ends the call when the trunk hangs up first, and BYEs the phone", async () => {
      const sipp = await trunk("trunk-answer-bye.xml", { hold: "500" });
      const call = await place(answering.seat, "+15550107003");
      await sippPassed(sipp.done);
      const done = await ended(call.id);
      expect(done).toMatchObject({
        status: "completed",
        hangup_cause: "normal_clearing",
        hangup_source: "callee",
        sip_code: 200,
      });
      expect(done.answered_at).not.toBeNull();
    });

    it("relays the trunk's re-INVITE (hold) to the phone and the phone's answer back", async () => {
      const sipp = await trunk("trunk-reinvite.xml");
      const call = await place(answering.seat, "+15550107009");
      await statusBecomes(call.id, "in_progress");
      // The phone receives the trunk's offer in a re-INVITE of its own dialog (CSeq 3: the
      // re-INVITE that gave it the trunk's answer was 2).
      await phoneSaw(answering.phone, "a=sendonly");
      const cseq = await eventually(
        () => phoneCseq(call.id),
        (n) => n === 3,
      );
      expect(cseq).toBe(3);
      expect((await api("POST", `/api/calls/${call.id}/hangup`)).status).toBe(200);
      const run = await sippPassed(sipp.done);
      expect(logged(run, "reanswer")).toMatch(/^recvonly /);
      expect(await ended(call.id)).toMatchObject({ status: "completed", hangup_source: "caller" });
    });

    it("answers what it does not take: a new INVITE from the trunk to no DID 404, requests of no dialog 481", async () => {
      const socket = createSocket("udp4");
      const statuses: number[] = [];
      socket.on("message", (data) => {
        const status = /^SIP\/2\.0 (\d{3})/.exec(data.toString())?.[1];
        if (status && status !== "100") statuses.push(Number(status));
      });
      await new Promise<void>((resolve) => socket.bind(0, host, resolve));
      const port = sipListener(p, host).port;
      const request = (method: string, toTag: string, n: number) =>
        [
          `${method} sip:anyone@${host}:${port} SIP/2.0`,
          `Via: SIP/2.0/UDP ${host}:${socket.address().port};branch=z9hG4bKprobe${method}${n}`,
          "Max-Forwards: 70",
          `From: <sip:probe@${host}>;tag=probe`,
          `To: <sip:anyone@${host}>${toTag}`,
          `Call-ID: probe-${n}@${host}`,
          `CSeq: 1 ${method}`,
          "Content-Length: 0",
          "",
          "",
        ].join("\r\n");
      try {
        for (const [n, [method, toTag]] of [
          ["INVITE", ""],
          ["INVITE", ";tag=unknown"],
          ["BYE", ";tag=unknown"],
          ["UPDATE", ";tag=unknown"],
        ].entries()) {
          socket.send(request(method!, toTag!, n), port, host);
          await eventually(
            async () => statuses.length,
            (count) => count === n + 1,
            5_000,
          );
        }
        // The probe sends from the trunk's address (an inbound call); `anyone` is no number.
        expect(statuses).toEqual([404, 481, 481, 481]);
      } finally {
        socket.close();
      }
    });

    it("ends the call when the agent hangs up the phone, and BYEs the trunk", async () => {
      const agent = await phoneFor("desk hanging up", "auto");
      let stopped = false;
      try {
        const sipp = await trunk("trunk-answer.xml");
        const call = await place(agent.seat, "+15550107008");
        await statusBecomes(call.id, "in_progress");
        // On SIGTERM baresip hangs up its calls (BYE) before it unregisters.
        await agent.phone.stop();
        stopped = true;
        await sippPassed(sipp.done);
        expect(await ended(call.id)).toMatchObject({
          status: "completed",
          hangup_cause: "normal_clearing",
          hangup_source: "caller",
          sip_code: 200,
        });
      } finally {
        if (!stopped) await agent.phone.stop();
      }
    });

    it("CANCELs the trunk when the phone hangs up while the trunk rings: canceled / originator_cancel", async () => {
      const agent = await phoneFor("desk giving up", "auto");
      const socket = createSocket("udp4");
      try {
        const sipp = await trunk("trunk-ring.xml");
        const call = await place(agent.seat, "+15550107010");
        await statusBecomes(call.id, "ringing");
        // The test sends the BYE of the phone's dialog itself (its Call-ID and tags, from the
        // dialog row), so it can also send one out of order.
        const dialog = (await sipDialog(p, call.id, "phone"))!;
        const answers: string[] = [];
        socket.on("message", (data) => answers.push(data.toString()));
        await new Promise<void>((resolve) => socket.bind(0, host, resolve));
        const port = sipListener(p, host).port;
        const bye = (cseq: number) =>
          [
            `BYE sip:switchboard@${host}:${port} SIP/2.0`,
            `Via: SIP/2.0/UDP ${host}:${socket.address().port};branch=z9hG4bKphonebye${cseq};rport`,
            "Max-Forwards: 70",
            `From: <sip:${agent.seat.id}@${host}>;tag=${dialog.remote_tag}`,
            `To: <sip:+15550107010@${host}>;tag=${dialog.local_tag}`,
            `Call-ID: ${dialog.sip_call_id}`,
            `CSeq: ${cseq} BYE`,
            "Content-Length: 0",
            "",
            "",
          ].join("\r\n");
        socket.send(bye(2), port, host);
        const answered = await eventually(
          async () => answers,
          (a) => a.length > 0,
          5_000,
        );
        expect(answered[0]).toMatch(/^SIP\/2\.0 200 /);
        // A request of the dialog with a CSeq not above the last one is out of order (§12.2.2).
        socket.send(bye(1), port, host);
        await eventually(
          async () => answers,
          (a) => a.length > 1,
          5_000,
        );
        expect(answers[1]).toMatch(/^SIP\/2\.0 500 /);
        await sippPassed(sipp.done);
        expect(await ended(call.id)).toMatchObject({
          status: "canceled",
          hangup_cause: "originator_cancel",
          hangup_source: "caller",
          sip_code: 487,
        });
      } finally {
        socket.close();
        await agent.phone.stop();
      }
    });

    it("maps the trunk's refusals to states and causes, keeping the SIP code", async () => {
      const cases = [
        { status: 486, reason: "Busy Here", call: "busy", cause: "user_busy" },
        { status: 603, reason: "Decline", call: "rejected", cause: "call_rejected" },
        { status: 403, reason: "Forbidden", call: "rejected", cause: "call_rejected" },
        { status: 404, reason: "Not Found", call: "rejected", cause: "call_rejected" },
        { status: 480, reason: "Temporarily Unavailable", call: "no_answer", cause: "no_answer" },
        { status: 503, reason: "Service Unavailable", call: "failed", cause: "network_error" },
      ];
      for (const [index, c] of cases.entries()) {
        const sipp = await trunk("trunk-refuse.xml", {
          status: String(c.status),
          reason: c.reason,
        });
        const call = await place(answering.seat, `+1555010710${index}`);
        await sippPassed(sipp.done);
        const done = await ended(call.id);
        expect(done, `${c.status}`).toMatchObject({
          status: c.call,
          hangup_cause: c.cause,
          hangup_source: "callee",
          sip_code: c.status,
        });
      }
    });

    it("answers the trunk's 407 challenge with the trunk credentials", async () => {
      // RFC 2617 without qop: MD5(HA1:nonce:HA2), what the scenario expects to see.
      const to = "+15550107004";
      const ha1 = md5("trunkuser:trunk.test:trunksecret");
      const ha2 = md5(`INVITE:sip:${to}@${host}:${trunkPort};user=phone`);
      const sipp = await trunk("trunk-challenge.xml", {
        response: md5(`${ha1}:switchboard-test-nonce:${ha2}`),
      });
      const call = await place(answering.seat, to);
      await statusBecomes(call.id, "in_progress");
      await api("POST", `/api/calls/${call.id}/hangup`);
      const run = await sippPassed(sipp.done);
      expect(run.logs.some((line) => line.startsWith("auth=ok"))).toBe(true);
      expect(await ended(call.id)).toMatchObject({ status: "completed" });
    });

    it("CANCELs a trunk that rings past the dial timeout: no_answer / timeout", async () => {
      const sipp = await trunk("trunk-ring.xml");
      const call = await place(answering.seat, "+15550107005", { timeout_seconds: 5 });
      await statusBecomes(call.id, "ringing");
      await sippPassed(sipp.done);
      expect(await ended(call.id)).toMatchObject({
        status: "no_answer",
        hangup_cause: "timeout",
        hangup_source: "platform",
      });
    });

    it("CANCELs a ringing trunk on an API hangup: canceled / originator_cancel", async () => {
      const sipp = await trunk("trunk-ring.xml");
      const call = await place(answering.seat, "+15550107006");
      await statusBecomes(call.id, "ringing");
      expect((await api("POST", `/api/calls/${call.id}/hangup`)).status).toBe(200);
      await sippPassed(sipp.done);
      expect(await ended(call.id)).toMatchObject({
        status: "canceled",
        hangup_cause: "originator_cancel",
        hangup_source: "caller",
      });
    });

    it("CANCELs a phone that does not answer within the dial timeout: no_answer", async () => {
      const call = await place(ringing.seat, "+15550107007", { timeout_seconds: 5 });
      const done = await ended(call.id);
      expect(done).toMatchObject({ status: "no_answer", hangup_cause: "timeout" });
      await phoneSaw(ringing.phone, "CANCEL sip:");
    });
  },
);
