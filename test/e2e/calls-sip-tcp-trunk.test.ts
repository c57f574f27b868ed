import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutTools } from "@switchboard/test-support/tools";
import type { CallPlatform } from "@switchboard/test-support/fixtures/calls";
import { freeSipPort, startSippServer, type Baresip } from "@switchboard/test-support/sip-peers";
import {
  seatWithPhone,
  sipListener,
  sippLogged,
  startSipPlatform,
  suiteApi,
  type SipSuiteSeat,
} from "@switchboard/test-support/fixtures/sip";
import {
  callWhen,
  completedByCaller,
  legTransports,
  liveOrEnded,
  placeOutbound,
} from "@switchboard/test-support/fixtures/sip-calls";

const host = "127.0.0.1";

/**
 * A trunk spoken to over TCP (`SIP_TRUNK_URI` with `;transport=tcp`, docs/api.md "Voice over
 * SIP"): SIPp as the trunk on a TCP port (`-t t1`); the platform opens the connection, its
 * INVITE says so in Via and the Request-URI, the ACK and BYE go on the same connection.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "outbound calls to a TCP trunk",
  () => {
    let p: CallPlatform;
    let token: string;
    let trunkPort: number;
    let from: string;
    let seat: SipSuiteSeat;
    let phone: Baresip;
    const api = suiteApi(
      () => p,
      () => token,
    );

    beforeAll(async () => {
      trunkPort = await freeSipPort();
      ({ p, token } = await startSipPlatform({
        seed: 35,
        trunkPort,
        env: { SIP_TRUNK_URI: `sip:${host}:${trunkPort};transport=tcp` },
      }));
      from = await p.assignNumber(token);
      ({ seat, phone } = await seatWithPhone(api, "desk", {
        registrar: sipListener(p, host),
        answermode: "auto",
      }));
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await p?.stop();
    });

    const place = async (to: string) => (await placeOutbound(api, { to, from, seat })).id;

    it("INVITEs the trunk over TCP, the trunk's answer connects the call, the hangup's BYE goes on the same connection", async () => {
      const sipp = await startSippServer({
        scenario: "trunk-answer-plain-rtp.xml",
        port: trunkPort,
        transport: "t1",
        timeoutMs: 30_000,
      });
      const callId = await place("+15550133101");
      const live = await callWhen(api, callId, liveOrEnded, 20_000);
      expect(live.status, phone.output().slice(-6_000)).toBe("in_progress");
      expect((await api("POST", `/api/calls/${callId}/hangup`)).status).toBe(200);
      const run = await sipp.done;
      expect(run.code, run.output).toBe(0);
      const logged = (name: string) => sippLogged(run, name);
      expect(logged("via")).toBe("TCP");
      expect(logged("ruri")).toBe(`sip:+15550133101@${host}:${trunkPort};transport=tcp;user=phone`);
      expect(await callWhen(api, callId)).toMatchObject(completedByCaller);
      expect(await legTransports(p, callId)).toEqual({ phone: "udp", trunk: "tcp" });
    });

    it("fails the call at once when the trunk refuses the connection: failed / network_error, well before Timer B", async () => {
      // Nothing listens on the trunk's port now.
      const started = Date.now();
      const done = await callWhen(api, await place("+15550133102"));
      expect(done).toMatchObject({
        status: "failed",
        hangup_cause: "network_error",
        hangup_source: "platform",
        sip_code: 503,
      });
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  },
);
