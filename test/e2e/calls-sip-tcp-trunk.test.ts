import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";
import {
  freeSipPort,
  startBaresip,
  startSippServer,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import { sipCarrierEnv } from "@switchboard/test-support/fixtures/sip";

interface Call {
  id: string;
  status: string;
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
 * A trunk spoken to over TCP (`SIP_TRUNK_URI` with `;transport=tcp`, docs/api.md "Voice over
 * SIP"): SIPp as the trunk on a TCP port (`-t t1`); the platform opens the connection, its
 * INVITE says so in Via and the Request-URI, the ACK and BYE go on the same connection.
 */
describe("outbound calls to a TCP trunk", () => {
  let p: CallPlatform;
  let token: string;
  let trunkPort: number;
  let from: string;
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

  beforeAll(async () => {
    trunkPort = await freeSipPort();
    p = await startCallPlatform({
      seed: 35,
      env: {
        ...sipCarrierEnv(trunkPort),
        SIP_TRUNK_URI: `sip:${host}:${trunkPort};transport=tcp`,
      },
    });
    token = await p.token();
    expect((await api("POST", "/api/agents", { name: "alice" })).status).toBe(201);
    from = await p.assignNumber(token);
    seat = (await api<Seat>("POST", "/api/seats", { name: "desk", max_concurrent_calls: 2 })).body;
    phone = await startBaresip({
      username: seat.sip.username,
      password: seat.sip.password!,
      registrar: { host, port: p.callControl().sip!.endpoint.transport.port },
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
  });

  it("INVITEs the trunk over TCP, the trunk's answer connects the call, the hangup's BYE goes on the same connection", async () => {
    const sipp = await startSippServer({
      scenario: "trunk-answer-plain-rtp.xml",
      port: trunkPort,
      transport: "t1",
      timeoutMs: 30_000,
    });
    const placed = await api<Call>("POST", "/api/calls/outbound", {
      to: "+15550133101",
      from,
      agent: "alice",
      seat_id: seat.id,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const callId = placed.body.id;
    const live = await eventually(
      async () => (await api<Call>("GET", `/api/calls/${callId}`)).body,
      (c) => c.status === "in_progress" || c.ended_at !== null,
      20_000,
    );
    expect(live.status, phone.output().slice(-6_000)).toBe("in_progress");
    expect((await api("POST", `/api/calls/${callId}/hangup`)).status).toBe(200);
    const run = await sipp.done;
    expect(run.code, run.output).toBe(0);
    const logged = (name: string) =>
      run.logs.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
    expect(logged("via")).toBe("TCP");
    expect(logged("ruri")).toBe(`sip:+15550133101@${host}:${trunkPort};transport=tcp;user=phone`);
    const done = await eventually(
      async () => (await api<Call>("GET", `/api/calls/${callId}`)).body,
      (c) => c.ended_at !== null,
      20_000,
    );
    expect(done).toMatchObject({
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
      { leg: "phone", flow_transport: "udp" },
      { leg: "trunk", flow_transport: "tcp" },
    ]);
  });

  it("fails the call at once when the trunk refuses the connection: failed / network_error, well before Timer B", async () => {
    // Nothing listens on the trunk's port now.
    const placed = await api<Call>("POST", "/api/calls/outbound", {
      to: "+15550133102",
      from,
      agent: "alice",
      seat_id: seat.id,
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const started = Date.now();
    const done = await eventually(
      async () => (await api<Call>("GET", `/api/calls/${placed.body.id}`)).body,
      (c) => c.ended_at !== null,
      20_000,
    );
    expect(done).toMatchObject({ status: "failed", hangup_cause: "network_error" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
