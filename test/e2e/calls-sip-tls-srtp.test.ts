import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";
import { startRtpengine, type Rtpengine } from "@switchboard/test-support/rtpengine";
import {
  freeSipPort,
  runSipp,
  startBaresip,
  startSippServer,
  type Baresip,
  type SippRun,
} from "@switchboard/test-support/sip-peers";
import { sipCarrierEnv } from "@switchboard/test-support/fixtures/sip";
import {
  selfSignedCertificate,
  type TestCertificate,
} from "@switchboard/test-support/tls-certificate";

interface Call {
  id: string;
  status: string;
  to: string;
  hangup_cause: string | null;
  hangup_source: string | null;
  sip_code: number | null;
  ended_at: string | null;
}
interface Seat {
  id: string;
  sip: { username: string; registered: boolean; password?: string };
}

const host = "127.0.0.1";

/**
 * A phone on the internet (docs/api.md "Voice over SIP"): a real baresip registered over TLS
 * (SIP_TLS_PORT, a self-signed certificate it trusts) with mandatory SRTP (mediaenc=srtp-mand:
 * RTP/SAVP with SDES keys, RFC 4568), its media through a real rtpengine (SIP_RTP_RELAY) that
 * translates RTP/SAVP ↔ RTP/AVP, so the trunk (SIPp over UDP) sees plain RTP both ways. The
 * phone takes an outbound call and an inbound one.
 */
describe("a phone on TLS with SRTP, through the RTP relay", () => {
  let certificate: TestCertificate;
  let relay: Rtpengine;
  let p: CallPlatform;
  let token: string;
  let trunkPort: number;
  let tlsPort: number;
  let from: string;
  let did: string;
  let seat: Seat;
  let phone: Baresip;

  const api = async <T>(method: string, path: string, json?: unknown) => {
    const response = await p.request(`/v1${path}`, {
      method,
      token,
      ...(json === undefined ? {} : { json }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const get = async (id: string) => (await api<Call>("GET", `/api/calls/${id}`)).body;
  const ended = (id: string) =>
    eventually(
      () => get(id),
      (c) => c.ended_at !== null,
      25_000,
    );
  const finished = async (run: Promise<SippRun>) => {
    const result = await run;
    expect(result.code, result.output).toBe(0);
    return result;
  };
  const logged = (run: SippRun, name: string) =>
    run.logs.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
  /** The SDP of the last INVITE baresip printed (its SIP trace), up to the next message. */
  const phoneSaw = (pattern: RegExp) =>
    eventually(
      async () => phone.output(),
      (output) => pattern.test(output),
      10_000,
    );

  beforeAll(async () => {
    certificate = selfSignedCertificate();
    relay = await startRtpengine();
    trunkPort = await freeSipPort();
    p = await startCallPlatform({
      seed: 33,
      env: {
        ...sipCarrierEnv(trunkPort),
        SIP_TLS_PORT: "0",
        SIP_TLS_CERT_FILE: certificate.certFile,
        SIP_TLS_KEY_FILE: certificate.keyFile,
        SIP_RTP_RELAY: `${relay.host}:${relay.port}`,
      },
    });
    token = await p.token();
    tlsPort = p.callControl().sip!.endpoint.transport.tlsPort!;
    expect(tlsPort).toBeGreaterThan(0);
    expect((await api("POST", "/api/agents", { name: "alice" })).status).toBe(201);
    from = await p.assignNumber(token);
    const created = await api<Seat>("POST", "/api/seats", {
      name: "desk tls",
      max_concurrent_calls: 2,
    });
    seat = created.body;
    did = await p.assignNumber(token);
    const routed = await api("POST", "/api/routes", {
      name: "tls line",
      numbers: [did],
      agent: "alice",
      seat_id: seat.id,
    });
    expect(routed.status, JSON.stringify(routed.body)).toBe(201);
    phone = await startBaresip({
      username: seat.sip.username,
      password: seat.sip.password!,
      registrar: { host, port: tlsPort },
      transport: "tls",
      cafile: certificate.certFile,
      mediaenc: "srtp-mand",
      answermode: "auto",
    });
    const registered = await eventually(
      async () => (await api<Seat>("GET", `/api/seats/${seat.id}`)).body.sip.registered,
      (r) => r,
      15_000,
    );
    expect(registered, phone.output()).toBe(true);
    const { rows } = await p.db.query<{ transport: string }>(
      `SELECT transport FROM call_control.sip_registrations WHERE seat_id = $1`,
      [seat.id],
    );
    expect(rows).toEqual([{ transport: "tls" }]);
  }, 60_000);
  afterAll(async () => {
    await phone?.stop();
    await p?.stop();
    await relay?.stop();
    certificate?.remove();
  });

  it("takes an outbound call: the phone's RTP/SAVP offer reaches the trunk as RTP/AVP, the trunk's answer reaches the phone as RTP/SAVP with an SDES key", async () => {
    const sipp = await startSippServer({
      scenario: "trunk-answer-plain-rtp.xml",
      port: trunkPort,
      timeoutMs: 30_000,
    });
    const placed = await api<Call>("POST", "/api/calls/outbound", {
      to: "+15550133001",
      from,
      agent: "alice",
      seat_id: seat.id,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const callId = placed.body.id;
    const live = await eventually(
      () => get(callId),
      (c) => c.status === "in_progress" || c.ended_at !== null,
      20_000,
    );
    expect(live.status, phone.output().slice(-8_000)).toBe("in_progress");
    // The re-INVITE giving the phone the trunk's answer: SRTP, with the relay's key.
    const reinvite =
      /INVITE sip:[^\n]*\n(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?m=audio \d+ RTP\/SAVP [^\n]*\n(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?a=crypto:\d+ [A-Z0-9_]+ inline:/;
    const output = await phoneSaw(reinvite);
    expect(reinvite.test(output), output.slice(-8_000)).toBe(true);
    expect((await api("POST", `/api/calls/${callId}/hangup`)).status).toBe(200);
    const run = await finished(sipp.done);
    expect(logged(run, "profile")).toBe("RTP/AVP");
    expect(await ended(callId)).toMatchObject({
      status: "completed",
      hangup_cause: "normal_clearing",
      hangup_source: "caller",
      sip_code: 200,
    });
    const { rows } = await p.db.query<{ leg: string; flow_transport: string }>(
      `SELECT leg, flow_transport FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
      [callId],
    );
    expect(rows).toEqual([
      { leg: "phone", flow_transport: "tls" },
      { leg: "trunk", flow_transport: "udp" },
    ]);
  });

  it("takes an inbound call: the trunk's RTP/AVP offer reaches the phone over TLS as RTP/SAVP with an SDES key, the phone's answer reaches the trunk as RTP/AVP", async () => {
    const run = runSipp({
      scenario: "inbound-answer-plain-rtp.xml",
      target: { host, port: p.callControl().sip!.endpoint.transport.port },
      keys: { did },
      timeoutMs: 45_000,
    });
    const ringing = await eventually(
      async () =>
        (await api<{ data: Call[] }>("GET", "/api/calls?direction=inbound&limit=100")).body.data,
      (calls) => calls.some((c) => c.to === did),
      20_000,
    ).then((calls) => calls.find((c) => c.to === did)!);
    expect(ringing).toMatchObject({ status: "ringing" });
    const answered = await api<Call>("POST", "/api/calls/inbound/answer", { call_id: ringing.id });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const done = await finished(run);
    expect(logged(done, "profile")).toBe("RTP/AVP");
    const offer =
      /INVITE sip:[^\n]*transport=tls[^\n]*\n(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?m=audio \d+ RTP\/SAVP [^\n]*\n(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?a=crypto:\d+ [A-Z0-9_]+ inline:/;
    const output = await phoneSaw(offer);
    expect(offer.test(output), output.slice(-8_000)).toBe(true);
    expect(await ended(ringing.id)).toMatchObject({
      status: "completed",
      hangup_cause: "normal_clearing",
      hangup_source: "caller",
      sip_code: 200,
    });
  });
});

/**
 * Without the RTP relay the platform cannot translate SRTP to the trunk's plain RTP: a phone on
 * TLS offering RTP/SAVP gets its outbound call refused (failed / network_error, 488) and the
 * trunk is never INVITEd.
 */
describe("a phone on TLS with SRTP, without the RTP relay", () => {
  let certificate: TestCertificate;
  let p: CallPlatform;
  let token: string;
  let phone: Baresip;
  let seat: Seat;
  let from: string;

  const api = async <T>(method: string, path: string, json?: unknown) => {
    const response = await p.request(`/v1${path}`, {
      method,
      token,
      ...(json === undefined ? {} : { json }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };

  beforeAll(async () => {
    certificate = selfSignedCertificate();
    p = await startCallPlatform({
      seed: 34,
      env: {
        ...sipCarrierEnv(await freeSipPort()),
        SIP_TLS_PORT: "0",
        SIP_TLS_CERT_FILE: certificate.certFile,
        SIP_TLS_KEY_FILE: certificate.keyFile,
      },
    });
    token = await p.token();
    expect((await api("POST", "/api/agents", { name: "alice" })).status).toBe(201);
    from = await p.assignNumber(token);
    seat = (await api<Seat>("POST", "/api/seats", { name: "desk", max_concurrent_calls: 2 })).body;
    phone = await startBaresip({
      username: seat.sip.username,
      password: seat.sip.password!,
      registrar: { host, port: p.callControl().sip!.endpoint.transport.tlsPort! },
      transport: "tls",
      cafile: certificate.certFile,
      mediaenc: "srtp-mand",
      answermode: "auto",
    });
    const registered = await eventually(
      async () => (await api<Seat>("GET", `/api/seats/${seat.id}`)).body.sip.registered,
      (r) => r,
      15_000,
    );
    expect(registered, phone.output()).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await phone?.stop();
    await p?.stop();
    certificate?.remove();
  });

  it("refuses the phone's SRTP offer: failed / network_error with 488, the phone's leg ended with a BYE", async () => {
    const placed = await api<Call>("POST", "/api/calls/outbound", {
      to: "+15550133002",
      from,
      agent: "alice",
      seat_id: seat.id,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const done = await eventually(
      async () => (await api<Call>("GET", `/api/calls/${placed.body.id}`)).body,
      (c) => c.ended_at !== null,
      20_000,
    );
    expect(done).toMatchObject({
      status: "failed",
      hangup_cause: "network_error",
      hangup_source: "platform",
      sip_code: 488,
    });
    const { rows } = await p.db.query<{ leg: string; state: string }>(
      `SELECT leg, state FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
      [placed.body.id],
    );
    expect(rows).toEqual([{ leg: "phone", state: "terminated" }]);
    await eventually(
      async () => phone.output(),
      (output) => output.includes("BYE sip:"),
      10_000,
    );
  });
});
