import { createHash } from "node:crypto";
import { createSocket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCallControlSettings } from "@switchboard/call-control";
import { startSip, type RunningSip } from "@switchboard/call-control/sip/sip-service";
import {
  eventually,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";
import { runSipp, startBaresip } from "@switchboard/test-support/sip-peers";
import { suiteApi } from "@switchboard/test-support/fixtures/sip";
import { skipWithoutTools } from "@switchboard/test-support/tools";

interface SeatSip {
  username: string;
  domain: string;
  registered: boolean;
  contact: string | null;
  password?: string;
}
interface Seat {
  id: string;
  sip: SeatSip;
}

const host = "127.0.0.1";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Seats as SIP endpoints (docs/api.md "Voice over SIP"): the platform runs with SIP_LISTEN, real
 * phones register. baresip (Debian's 1.0, whose SIP stack gives up on a SHA-256 challenge)
 * registers with a second SIP replica this suite starts on the same database with
 * SIP_DIGEST_ALGORITHMS=MD5 — which also shows that what one replica registers, every replica's
 * API sees. SIPp shows what baresip cannot: the SHA-256 challenge and answer, TCP, 423,
 * `Contact: *`, expiry, a stale nonce.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "seats as SIP endpoints",
  () => {
    let p: CallPlatform;
    let token: string;
    let sipPort: number;
    let legacy: RunningSip;
    let shortNonces: RunningSip;
    let stopped = false;

    const replicaSettings = (env: Record<string, string>) =>
      loadCallControlSettings({
        NODE_ENV: "test",
        SIP_LISTEN: `${host}:0`,
        SIP_DOMAIN: host,
        SIP_REGISTER_MIN_EXPIRES: "2",
        ...env,
      }).sip;

    beforeAll(async () => {
      // Port 0: the listener binds a free port (UDP and TCP alike), read back from the service.
      p = await startCallPlatform({
        seed: 10,
        env: { SIP_LISTEN: `${host}:0`, SIP_REGISTER_MIN_EXPIRES: "2" },
      });
      sipPort = p.callControl().sip!.endpoint.transport.port;
      token = await p.token();
      const pool = p.test.pools["call-control"]!;
      legacy = (await startSip({
        pool,
        logger: p.test.logger,
        settings: replicaSettings({ SIP_DIGEST_ALGORITHMS: "MD5" }),
      }))!;
      shortNonces = (await startSip({
        pool,
        logger: p.test.logger,
        settings: replicaSettings({ SIP_NONCE_LIFETIME_SECONDS: "1" }),
      }))!;
    });
    afterAll(async () => {
      await legacy?.stop();
      await shortNonces?.stop();
      if (!stopped) await p?.stop();
    });

    const api = suiteApi(
      () => p,
      () => token,
    );
    const createSeat = async (name: string) => {
      const created = await api<Seat>("POST", "/api/seats", { name });
      expect(created.status).toBe(201);
      return created.body;
    };
    const seatSip = async (id: string) => (await api<Seat>("GET", `/api/seats/${id}`)).body.sip;
    const registeredBecomes = (id: string, registered: boolean, timeoutMs = 8_000) =>
      eventually(
        () => seatSip(id),
        (sip) => sip.registered === registered,
        timeoutMs,
      );
    const address = (running: RunningSip) => ({ host, port: running.endpoint.transport.port });
    const platformSip = {
      host,
      get port() {
        return sipPort;
      },
    };

    /**
     * The Authorization value answering `nonce` with SHA-256 (RFC 7616 §3.4.1); each use of a
     * nonce needs a higher nonce-count `nc` (a repeated one is a replay).
     */
    function sha256Authorization(
      seat: Seat,
      password: string,
      realm: string,
      nonce: string,
      port: number,
      nc = 1,
    ) {
      const uri = `sip:${host}:${port}`;
      const cnonce = "0a4f113b";
      const count = nc.toString(16).padStart(8, "0");
      const ha1 = sha256(`${seat.sip.username}:${realm}:${password}`);
      const ha2 = sha256(`REGISTER:${uri}`);
      const response = sha256(`${ha1}:${nonce}:${count}:${cnonce}:auth:${ha2}`);
      return `Digest username="${seat.sip.username}", realm="${realm}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=SHA-256, qop=auth, nc=${count}, cnonce="${cnonce}"`;
    }

    /** A real challenge from `target` (SIPp's log gives its realm and nonce). */
    async function challenge(seat: Seat, target: { host: string; port: number }) {
      const run = await runSipp({
        scenario: "register-challenge.xml",
        target,
        keys: { user: seat.sip.username, domain: seat.sip.domain },
      });
      expect(run.code, run.output).toBe(0);
      const value = (name: string) =>
        run.logs.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1) ?? "";
      return { realm: value("realm"), nonce: value("nonce") };
    }

    it("gives a new seat a SIP account: username, domain, a password shown once, kept as HA1s only", async () => {
      const seat = await createSeat("Desk SIP");
      expect(seat.sip).toEqual({
        username: seat.id,
        domain: host,
        registered: false,
        contact: null,
        password: expect.stringMatching(/^sbsip_[A-Za-z0-9]{24}$/),
      });
      const read = await api<Seat>("GET", `/api/seats/${seat.id}`);
      expect(read.body.sip).toEqual({
        username: seat.id,
        domain: host,
        registered: false,
        contact: null,
      });
      const listed = await api<{ data: Seat[] }>("GET", "/api/seats?limit=50");
      expect(listed.body.data.find((s) => s.id === seat.id)?.sip).not.toHaveProperty("password");

      const { rows } = await p.db.query<Record<string, unknown>>(
        `SELECT * FROM call_control.seat_sip_credentials WHERE seat_id = $1`,
        [seat.id],
      );
      expect(rows).toHaveLength(1);
      const password = seat.sip.password!;
      expect(rows[0]).toMatchObject({
        realm: host,
        ha1_md5: createHash("md5").update(`${seat.id}:${host}:${password}`).digest("hex"),
        ha1_sha256: sha256(`${seat.id}:${host}:${password}`),
      });
      expect(JSON.stringify(rows[0])).not.toContain(password.slice(6));
    });

    it("baresip registers with the seat's credentials: registered, with its contact, on any replica; unregisters on exit", async () => {
      const seat = await createSeat("Desk baresip");
      const phone = await startBaresip({
        username: seat.sip.username,
        password: seat.sip.password!,
        registrar: address(legacy),
      });
      try {
        const sip = await registeredBecomes(seat.id, true);
        expect(sip.registered, phone.output()).toBe(true);
        expect(sip.contact).toMatch(new RegExp(`^sip:${seat.id}-[0-9a-fx]+@127\\.0\\.0\\.1:\\d+$`));
        const { rows } = await p.db.query(
          `SELECT contact_uri, transport, source_address, source_port, received_by,
                expires_at > now() + interval '50 seconds' AS long_enough
           FROM call_control.sip_registrations WHERE seat_id = $1`,
          [seat.id],
        );
        expect(rows).toEqual([
          {
            contact_uri: sip.contact,
            transport: "udp",
            source_address: host,
            source_port: Number(/:(\d+)$/.exec(sip.contact!)![1]),
            received_by: `${host}:${legacy.endpoint.transport.port}`,
            long_enough: true,
          },
        ]);
      } finally {
        await phone.stop();
      }
      // On SIGTERM baresip sends its REGISTER with expires=0 (and answers the challenge to it).
      expect((await registeredBecomes(seat.id, false)).registered).toBe(false);
    });

    it("a baresip with a wrong password never registers (403)", async () => {
      const seat = await createSeat("Desk wrong password");
      const phone = await startBaresip({
        username: seat.sip.username,
        password: `${seat.sip.password!}x`,
        registrar: address(legacy),
      });
      try {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        expect(phone.output()).toMatch(/SIP\/2\.0 403 Forbidden/);
        expect((await seatSip(seat.id)).registered).toBe(false);
      } finally {
        await phone.stop();
      }
    });

    it("rotate-credentials: a new password shown once, the registrations gone, the old password refused, the new one works", async () => {
      const seat = await createSeat("Desk rotated");
      const oldPassword = seat.sip.password!;
      const first = await startBaresip({
        username: seat.sip.username,
        password: oldPassword,
        registrar: address(legacy),
      });
      try {
        expect((await registeredBecomes(seat.id, true)).registered, first.output()).toBe(true);
        const rotated = await api<Seat>("POST", `/api/seats/${seat.id}/sip/rotate-credentials`);
        expect(rotated.status).toBe(200);
        expect(rotated.body.sip).toEqual({
          username: seat.id,
          domain: host,
          registered: false,
          contact: null,
          password: expect.stringMatching(/^sbsip_[A-Za-z0-9]{24}$/),
        });
        expect(rotated.body.sip.password).not.toBe(oldPassword);
        expect((await seatSip(seat.id)).registered).toBe(false);

        const stale = await startBaresip({
          username: seat.sip.username,
          password: oldPassword,
          registrar: address(legacy),
        });
        try {
          await new Promise((resolve) => setTimeout(resolve, 3_000));
          expect(stale.output()).toMatch(/SIP\/2\.0 403 Forbidden/);
          expect((await seatSip(seat.id)).registered).toBe(false);
        } finally {
          await stale.stop();
        }
        const renewed = await startBaresip({
          username: seat.sip.username,
          password: rotated.body.sip.password!,
          registrar: address(legacy),
        });
        try {
          expect((await registeredBecomes(seat.id, true)).registered, renewed.output()).toBe(true);
        } finally {
          await renewed.stop();
        }
      } finally {
        await first.stop();
      }

      expect(
        (await api("POST", `/api/seats/seat_01jd2k8w7c3q9v0m5n6p7r8s9t/sip/rotate-credentials`))
          .status,
      ).toBe(404);
      const other = await p.request(`/v1/api/seats/${seat.id}/sip/rotate-credentials`, {
        method: "POST",
        token: await p.otherToken(),
      });
      expect(other.status).toBe(404);
    });

    it("SIPp: the challenge offers SHA-256 then MD5; a SHA-256 answer registers over UDP and TCP; Contact: * removes them", async () => {
      const seat = await createSeat("Desk SHA-256");
      const { realm, nonce } = await challenge(seat, platformSip);
      expect(realm).toBe(host);
      const keys = (nc: number) => ({
        user: seat.sip.username,
        domain: seat.sip.domain,
        auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, sipPort, nc),
        expires: "60",
      });

      const udp = await runSipp({ scenario: "register.xml", target: platformSip, keys: keys(1) });
      expect(udp.code, udp.output).toBe(0);
      const afterUdp = await seatSip(seat.id);
      expect(afterUdp.registered).toBe(true);
      expect(afterUdp.contact).toMatch(
        new RegExp(`^sip:${seat.id}@127\\.0\\.0\\.1:\\d+;transport=UDP$`),
      );

      const tcp = await runSipp({
        scenario: "register.xml",
        target: platformSip,
        transport: "t1",
        keys: keys(2),
      });
      expect(tcp.code, tcp.output).toBe(0);
      const { rows } = await p.db.query<{ transport: string }>(
        `SELECT transport FROM call_control.sip_registrations WHERE seat_id = $1 ORDER BY transport`,
        [seat.id],
      );
      expect(rows.map((r) => r.transport)).toEqual(["tcp", "udp"]);
      expect((await seatSip(seat.id)).contact).toMatch(/;transport=TCP$/);

      const all = await runSipp({
        scenario: "unregister-all.xml",
        target: platformSip,
        keys: keys(3),
      });
      expect(all.code, all.output).toBe(0);
      expect(await seatSip(seat.id)).toEqual({
        username: seat.id,
        domain: host,
        registered: false,
        contact: null,
      });
    });

    it("a seat from before SIP credentials has none until rotate-credentials issues its first", async () => {
      const id = "seat_01jd2k8w7c3q9v0m5n6p7r8s9v";
      await p.db.query(
        `INSERT INTO call_control.seats (id, account_id, name) VALUES ($1, $2, 'Old desk')`,
        [id, p.accountId],
      );
      const old = (await api<Seat>("GET", `/api/seats/${id}`)).body;
      expect(old.sip).toEqual({ username: id, domain: host, registered: false, contact: null });
      const { realm, nonce } = await challenge(old, platformSip);
      const attempt = (password: string, scenario = "register.xml") =>
        runSipp({
          scenario,
          target: platformSip,
          keys: {
            user: id,
            domain: host,
            auth: sha256Authorization(old, password, realm, nonce, sipPort),
            expires: "60",
          },
        });
      // No credentials: nothing verifies, the answer is 403 (the scenario expects 200 and fails).
      const refused = await attempt("sbsip_anything");
      expect(refused.code).not.toBe(0);
      expect(refused.output).toMatch(/403/);

      const rotated = await api<Seat>("POST", `/api/seats/${id}/sip/rotate-credentials`);
      expect(rotated.status).toBe(200);
      const registered = await attempt(rotated.body.sip.password!);
      expect(registered.code, registered.output).toBe(0);
      expect((await seatSip(id)).registered).toBe(true);
    });

    it("SIPp: too brief an expiry is 423 with Min-Expires, and registers nothing", async () => {
      const seat = await createSeat("Desk too brief");
      const { realm, nonce } = await challenge(seat, platformSip);
      const run = await runSipp({
        scenario: "register-too-brief.xml",
        target: platformSip,
        keys: {
          user: seat.sip.username,
          domain: seat.sip.domain,
          auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, sipPort),
          expires: "1",
        },
      });
      expect(run.code, run.output).toBe(0);
      expect(run.logs).toContain("min-expires=2");
      expect((await seatSip(seat.id)).registered).toBe(false);
    });

    it("SIPp: a registration whose expiry passes stops counting", async () => {
      const seat = await createSeat("Desk expiring");
      const { realm, nonce } = await challenge(seat, platformSip);
      const run = await runSipp({
        scenario: "register.xml",
        target: platformSip,
        keys: {
          user: seat.sip.username,
          domain: seat.sip.domain,
          auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, sipPort),
          expires: "2",
        },
      });
      expect(run.code, run.output).toBe(0);
      expect((await seatSip(seat.id)).registered).toBe(true);
      const after = await registeredBecomes(seat.id, false, 6_000);
      expect(after).toMatchObject({ registered: false, contact: null });
    });

    it("SIPp: a right digest on a stale nonce is challenged again with stale=true", async () => {
      const seat = await createSeat("Desk stale");
      const target = address(shortNonces);
      const { realm, nonce } = await challenge(seat, target);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const run = await runSipp({
        scenario: "register-stale.xml",
        target,
        keys: {
          user: seat.sip.username,
          domain: seat.sip.domain,
          auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, target.port),
        },
      });
      expect(run.code, run.output).toBe(0);
      expect((await seatSip(seat.id)).registered).toBe(false);
    });

    it("SIPp: a captured REGISTER replayed (its Call-ID and Contact SIPp's own) is challenged again, and binds nothing", async () => {
      const seat = await createSeat("Desk replayed");
      const { realm, nonce } = await challenge(seat, platformSip);
      const keys = {
        user: seat.sip.username,
        domain: seat.sip.domain,
        auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, sipPort),
        expires: "60",
      };
      const first = await runSipp({ scenario: "register.xml", target: platformSip, keys });
      expect(first.code, first.output).toBe(0);
      const unregister = await runSipp({
        scenario: "unregister-all.xml",
        target: platformSip,
        keys: {
          ...keys,
          auth: sha256Authorization(seat, seat.sip.password!, realm, nonce, sipPort, 2),
        },
      });
      expect(unregister.code, unregister.output).toBe(0);
      // The first Authorization again, from a new SIPp (another Call-ID, its own Contact).
      const replay = await runSipp({ scenario: "register-stale.xml", target: platformSip, keys });
      expect(replay.code, replay.output).toBe(0);
      expect((await seatSip(seat.id)).registered).toBe(false);
    });

    it("stops the SIP listener with the service: its UDP and TCP port is free again", async () => {
      await p.stop();
      stopped = true;
      const udp = createSocket("udp4");
      await new Promise<void>((resolve, reject) => {
        udp.once("error", reject);
        udp.bind(sipPort, host, () => resolve());
      });
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    });
  },
);
