import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";
import { freeSipPort, runSipp, startSippServer } from "@switchboard/test-support/sip-peers";
import { sipCarrierEnv } from "@switchboard/test-support/fixtures/sip";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const host = "127.0.0.1";
const callsPerSecond = 20;
const seconds = 30;
const total = callsPerSecond * seconds;
const trunkHoldMs = 1_000;
const liveStatuses = ["queued", "initiated", "ringing", "in_progress"];

/**
 * The sip carrier under load (docs/api.md "Voice over SIP"): 20 calls a second for 30 s through
 * the gateway, each ringing the seat's phone (SIPp registered with the seat's credentials,
 * answering every INVITE), then the trunk (SIPp answering, hanging up after 1 s). Every call
 * must end `completed` by the trunk's BYE, both SIPps must see every call succeed, and nothing
 * may be left live: no call, no open dialog.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp"]))(
  "outbound calls over SIP under load (20 calls/s for 30 s)",
  () => {
    let p: CallPlatform;
    let trunkPort: number;
    let phonePort: number;
    let token: string;
    let from: string;
    let seats: { id: string; sip: { username: string; password: string } }[];

    beforeAll(async () => {
      [trunkPort, phonePort] = [await freeSipPort(), await freeSipPort()];
      p = await startCallPlatform({
        seed: 20,
        env: {
          ...sipCarrierEnv(trunkPort),
        },
      });
      token = await p.token();
      const agent = await p.request("/v1/api/agents", {
        method: "POST",
        token,
        json: { name: "load" },
      });
      expect(agent.status).toBe(201);
      // Four seats (the calls spread their seat claims), each registered by the same SIPp phone.
      seats = await Promise.all(
        [1, 2, 3, 4].map(async (n) => {
          const seat = await p.request("/v1/api/seats", {
            method: "POST",
            token,
            json: { name: `load desk ${n}`, max_concurrent_calls: 10_000 },
          });
          expect(seat.status).toBe(201);
          return (await seat.json()) as { id: string; sip: { username: string; password: string } };
        }),
      );
      from = await p.assignNumber(token);
    }, 60_000);
    afterAll(async () => {
      await p?.stop();
    });

    it("ends every call completed by the trunk, each seen by both SIPps, and leaves nothing live", async () => {
      const registrar = { host, port: p.callControl().sip!.endpoint.transport.port };
      for (const { sip } of seats) {
        const registered = await runSipp({
          scenario: "phone-register.xml",
          target: registrar,
          port: phonePort,
          keys: { user: sip.username, domain: host },
          args: ["-au", sip.username, "-ap", sip.password],
        });
        expect(registered.code, registered.output).toBe(0);
      }

      const timeoutMs = (seconds + 90) * 1000;
      const [phone, trunk] = await Promise.all([
        startSippServer({ scenario: "phone-answer.xml", port: phonePort, calls: total, timeoutMs }),
        startSippServer({
          scenario: "trunk-answer-bye.xml",
          port: trunkPort,
          calls: total,
          fill: { hold: String(trunkHoldMs) },
          timeoutMs,
        }),
      ]);

      const placed: Promise<{ status: number; id?: string }>[] = [];
      const started = Date.now();
      for (let n = 0; n < total; n++) {
        const due = started + (n * 1000) / callsPerSecond;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
        placed.push(
          p
            .request("/v1/api/calls/outbound", {
              method: "POST",
              token,
              json: {
                to: `+1415555${String(n).padStart(4, "0")}`,
                from,
                agent: "load",
                seat_id: seats[n % seats.length]!.id,
              },
            })
            .then(async (response) => ({
              status: response.status,
              id: ((await response.clone().json()) as { id?: string }).id,
              problem:
                response.status === 201
                  ? undefined
                  : ((await response.json()) as { type?: string; detail?: string }),
            })),
        );
      }
      const responses = await Promise.all(placed);
      expect(responses.filter((r) => r.status !== 201)).toEqual([]);
      const ids = responses.map((r) => r.id!);

      const outcomes = await eventually(
        async () =>
          (
            await p.db.query<{
              status: string;
              hangup_cause: string;
              hangup_source: string;
              n: number;
            }>(
              `SELECT status, hangup_cause, hangup_source, count(*)::int AS n
               FROM call_control.calls WHERE id = ANY($1::text[])
              GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
              [ids],
            )
          ).rows,
        (rows) => rows.length > 0 && rows.every((row) => !liveStatuses.includes(row.status)),
        90_000,
      );
      expect(outcomes).toEqual([
        { status: "completed", hangup_cause: "normal_clearing", hangup_source: "callee", n: total },
      ]);

      const live = await p.db.query<{ calls: number; dialogs: number }>(
        `SELECT (SELECT count(*)::int FROM call_control.calls
                WHERE status = ANY($2::text[])) AS calls,
              (SELECT count(*)::int FROM call_control.sip_dialogs
                WHERE call_id = ANY($1::text[]) AND state <> 'terminated') AS dialogs`,
        [ids, liveStatuses],
      );
      expect(live.rows[0]).toEqual({ calls: 0, dialogs: 0 });

      const [phoneRun, trunkRun] = await Promise.all([phone.done, trunk.done]);
      expect(trunkRun.code, trunkRun.output).toBe(0);
      expect(phoneRun.code, phoneRun.output).toBe(0);
      expect(trunkRun.output).toMatch(
        new RegExp(`Successful call\\s*\\|\\s*\\d+\\s*\\|\\s*${total}\\b`),
      );
      expect(phoneRun.output).toMatch(
        new RegExp(`Successful call\\s*\\|\\s*\\d+\\s*\\|\\s*${total}\\b`),
      );
    }, 240_000);
  },
);
