import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { testDatabaseKinds, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCallControlSettings } from "../src/config.js";
import { migrateCallControl } from "../src/migrations.js";
import { createSeat } from "../src/resources/seats.js";
import { digestHa1, digestResponse, type DigestAlgorithm } from "../src/sip/stack/digest.js";
import { parseMessage, unquote, type SipResponse } from "../src/sip/stack/message.js";
import { routeEntries } from "../src/sip/dialogs/dialog-requests.js";
import { startSip, type RunningSip } from "../src/sip/sip-service.js";

const realm = "sip.example.test";
const logger = createLogger("sip-registrar-test", { level: "silent" });
/** One replica's settings (each binds its own port; all share the database and INTERNAL_SECRET). */
const replicaSettings = (env: Record<string, string> = {}) =>
  loadCallControlSettings({
    NODE_ENV: "test",
    SIP_LISTEN: "127.0.0.1:0",
    SIP_DOMAIN: realm,
    SIP_REGISTER_MIN_EXPIRES: "30",
    ...env,
  }).sip;

/**
 * The registrar on a real database (PostgreSQL and PGlite) and real UDP: what the phones of
 * test/e2e/seats-sip.test.ts do not show (refresh ordering, another seat's address, foreign
 * domains, realm changes, limits).
 */
describe.each(testDatabaseKinds)("the SIP registrar on $name", (kind) => {
  let database: TestDatabase;
  let pool: Pool;
  let sip: RunningSip;
  let phone: Socket;
  let phonePort: number;
  const inbox: SipResponse[] = [];

  beforeAll(async () => {
    database = await kind.create("sipreg");
    pool = createPool(database.url, { max: 4, name: "sip-registrar-test" });
    await migrateCallControl(pool);
    sip = (await startSip({ pool, logger, settings: replicaSettings() }))!;
    phone = createSocket("udp4");
    phone.on("message", (data) => inbox.push(parseMessage(data) as SipResponse));
    await new Promise<void>((resolve) => phone.bind(0, "127.0.0.1", resolve));
    phonePort = phone.address().port;
  });
  afterAll(async () => {
    phone?.close();
    await sip?.stop();
    await pool?.end();
    await database?.drop();
  });

  const newSeat = async () => {
    const { seat, sipPassword } = await createSeat(
      pool,
      { accountId: "acct_sip", name: "Desk" },
      realm,
    );
    return { id: seat.id, password: sipPassword };
  };

  /** Sends one REGISTER and waits for its response. */
  async function register(options: {
    user: string;
    callId: string;
    cseq: number;
    contacts?: string[];
    expires?: number;
    authorization?: string;
    requestHost?: string;
    toHost?: string;
    /** Another replica's SIP port. */
    port?: number;
    /** More header lines (Path, Supported). */
    headers?: string[];
  }): Promise<SipResponse> {
    const before = inbox.length;
    const lines = [
      `REGISTER sip:${options.requestHost ?? realm} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${phonePort};branch=z9hG4bK${randomBytes(6).toString("hex")};rport`,
      "Max-Forwards: 70",
      `From: <sip:${options.user}@${realm}>;tag=${randomBytes(4).toString("hex")}`,
      `To: <sip:${options.user}@${options.toHost ?? realm}>`,
      `Call-ID: ${options.callId}`,
      `CSeq: ${options.cseq} REGISTER`,
      ...(options.contacts ?? []).map((c) => `Contact: ${c}`),
      ...(options.expires === undefined ? [] : [`Expires: ${options.expires}`]),
      ...(options.authorization ? [`Authorization: ${options.authorization}`] : []),
      ...(options.headers ?? []),
      "Content-Length: 0",
      "",
      "",
    ];
    phone.send(lines.join("\r\n"), options.port ?? sip.endpoint.transport.port, "127.0.0.1");
    // Matched by Call-ID and CSeq: requests may be in flight at once.
    const mine = (r: SipResponse) =>
      r.headers["call-id"] === options.callId && r.headers.cseq.seq === options.cseq;
    const deadline = Date.now() + 5_000;
    while (!inbox.slice(before).some(mine) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const response = inbox.slice(before).find(mine);
    if (!response) throw new Error("no response");
    return response;
  }

  /** An Authorization answering `challenge` as `user` with `password`. */
  function answer(
    challenge: SipResponse,
    user: string,
    password: string,
    options: { algorithm?: DigestAlgorithm; realm?: string; qop?: boolean; nc?: string } = {},
  ): string {
    const algorithm = options.algorithm ?? "MD5";
    const offered = challenge.headers["www-authenticate"]!.find((h) => h.algorithm === algorithm)!;
    const nonce = unquote(offered.nonce)!;
    const uri = `sip:${realm}`;
    const usedRealm = options.realm ?? realm;
    const qop = options.qop ?? true;
    const nc = options.nc ?? "00000001";
    const response = digestResponse({
      algorithm,
      ha1: digestHa1(algorithm, user, usedRealm, password),
      nonce,
      method: "REGISTER",
      uri,
      ...(qop ? { qop: "auth", nc, cnonce: "c0ffee" } : {}),
    });
    return (
      `Digest username="${user}", realm="${usedRealm}", nonce="${nonce}", uri="${uri}", ` +
      `response="${response}", algorithm=${algorithm}` +
      (qop ? `, qop=auth, nc=${nc}, cnonce="c0ffee"` : "")
    );
  }

  /** A challenge, then the answered REGISTER. */
  async function authenticated(
    seat: { id: string; password: string },
    request: Omit<Parameters<typeof register>[0], "user" | "authorization">,
    options: Parameters<typeof answer>[3] & { as?: { id: string; password: string } } = {},
  ) {
    const credentials = options.as ?? seat;
    const challenge = await register({ ...request, user: seat.id });
    expect(challenge.status).toBe(401);
    return register({
      ...request,
      user: seat.id,
      authorization: answer(challenge, credentials.id, credentials.password, options),
    });
  }

  const contactOf = (port: number) => `<sip:desk@127.0.0.1:${port}>`;

  it("registers, lists the live contacts with their expiry, and orders refreshes by CSeq", async () => {
    const seat = await newSeat();
    const ok = await authenticated(seat, {
      callId: "order-1",
      cseq: 10,
      contacts: [contactOf(5071), `${contactOf(5072)};expires=40`],
      expires: 120,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.contact).toEqual([
      { name: undefined, uri: "sip:desk@127.0.0.1:5071", params: { expires: "120" } },
      { name: undefined, uri: "sip:desk@127.0.0.1:5072", params: { expires: "40" } },
    ]);
    // The same Call-ID with a CSeq not above the binding's: 500, nothing changes (§10.3 step 7).
    for (const cseq of [10, 9]) {
      const stale = await authenticated(seat, {
        callId: "order-1",
        cseq,
        contacts: [contactOf(5071)],
        expires: 0,
      });
      expect(stale).toMatchObject({ status: 500, reason: "Out Of Order" });
    }
    const removed = await authenticated(seat, {
      callId: "order-1",
      cseq: 11,
      contacts: [contactOf(5071)],
      expires: 0,
    });
    expect(removed.status).toBe(200);
    expect(removed.headers.contact).toEqual([
      { name: undefined, uri: "sip:desk@127.0.0.1:5072", params: { expires: "40" } },
    ]);
    const { rows } = await pool.query(
      `SELECT contact_uri, call_id, cseq::int AS cseq, transport, source_address, source_port
         FROM call_control.sip_registrations WHERE seat_id = $1`,
      [seat.id],
    );
    expect(rows).toEqual([
      {
        contact_uri: "sip:desk@127.0.0.1:5072",
        call_id: "order-1",
        cseq: 10,
        transport: "udp",
        source_address: "127.0.0.1",
        source_port: phonePort,
      },
    ]);
    // No Contact: the bindings as they are.
    const query = await authenticated(seat, { callId: "order-2", cseq: 1 });
    expect(query.headers.contact).toHaveLength(1);
  });

  it("stores a REGISTER's Path with its binding and echoes it to a UA that supports path (RFC 3327)", async () => {
    const seat = await newSeat();
    const edge = "<sip:127.0.0.1:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>";
    const ok = await authenticated(seat, {
      callId: "path-1",
      cseq: 1,
      contacts: [contactOf(5101)],
      expires: 60,
      headers: [`Path: ${edge}`, "Path: <sip:outer.example.test;lr>", "Supported: path"],
    });
    expect(ok.status).toBe(200);
    expect(routeEntries(ok.headers.path ?? [])).toEqual([edge, "<sip:outer.example.test;lr>"]);
    const stored = async () =>
      (
        await pool.query<{ path: string[] }>(
          `SELECT path FROM call_control.sip_registrations WHERE seat_id = $1`,
          [seat.id],
        )
      ).rows;
    expect(await stored()).toEqual([{ path: [edge, "<sip:outer.example.test;lr>"] }]);
    // A refresh without Supported: path is stored alike, not echoed; one without a Path clears it.
    const quiet = await authenticated(seat, {
      callId: "path-1",
      cseq: 2,
      contacts: [contactOf(5101)],
      expires: 60,
      headers: [`Path: ${edge}`],
    });
    expect(quiet.status).toBe(200);
    expect(quiet.headers.path).toBeUndefined();
    expect(await stored()).toEqual([{ path: [edge] }]);
    const direct = await authenticated(seat, {
      callId: "path-1",
      cseq: 3,
      contacts: [contactOf(5101)],
      expires: 60,
    });
    expect(direct.status).toBe(200);
    expect(await stored()).toEqual([{ path: [] }]);
  });

  it("refuses a Path from a source outside SIP_PATH_ALLOW (403) and a longer one than it keeps (400)", async () => {
    const seat = await newSeat();
    const guarded = (await startSip({
      pool,
      logger,
      settings: replicaSettings({ SIP_PATH_ALLOW: "10.0.0.0/8" }),
    }))!;
    try {
      const port = guarded.endpoint.transport.port;
      const request = { callId: "path-2", contacts: [contactOf(5102)], expires: 60, port };
      const foreign = await authenticated(seat, {
        ...request,
        cseq: 1,
        headers: ["Path: <sip:203.0.113.9;lr>"],
      });
      expect(foreign).toMatchObject({ status: 403, reason: "Path Not Allowed" });
      // Without a Path the same phone registers there.
      expect((await authenticated(seat, { ...request, cseq: 2 })).status).toBe(200);
      const six = Array.from({ length: 6 }, (_, i) => `<sip:p${i}.example.test;lr>`).join(", ");
      const long = await authenticated(seat, {
        callId: "path-2",
        cseq: 3,
        contacts: [contactOf(5102)],
        expires: 60,
        headers: [`Path: ${six}`],
      });
      expect(long).toMatchObject({ status: 400, reason: "Path Too Long" });
      const { rows } = await pool.query(
        `SELECT path FROM call_control.sip_registrations WHERE seat_id = $1`,
        [seat.id],
      );
      expect(rows).toEqual([{ path: [] }]);
    } finally {
      await guarded.stop();
    }
  });

  it("answers SHA-256 and MD5 credentials alike", async () => {
    const seat = await newSeat();
    for (const algorithm of ["SHA-256", "MD5"] as const) {
      const ok = await authenticated(
        seat,
        { callId: `algo-${algorithm}`, cseq: 1, contacts: [contactOf(5080)], expires: 60 },
        { algorithm },
      );
      expect(ok.status).toBe(200);
    }
  });

  it("refuses another seat's address, a wrong realm's HA1 and an answer without qop with 403", async () => {
    const mine = await newSeat();
    const theirs = await newSeat();
    const request = { callId: "forbidden", cseq: 1, contacts: [contactOf(5090)], expires: 60 };
    expect((await authenticated(theirs, request, { as: mine })).status).toBe(403);
    expect((await authenticated(mine, request, { qop: false })).status).toBe(403);
    // Credentials issued under another realm (SIP_DOMAIN changed since): refused until rotated.
    await pool.query(
      `UPDATE call_control.seat_sip_credentials SET realm = 'old.example.test' WHERE seat_id = $1`,
      [mine.id],
    );
    expect((await authenticated(mine, request)).status).toBe(403);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM call_control.sip_registrations WHERE seat_id = ANY($1)`,
      [[mine.id, theirs.id]],
    );
    expect(rows[0]).toEqual({ n: 0 });
  });

  it("answers 404 for another domain, and challenges an algorithm it does not offer", async () => {
    const seat = await newSeat();
    const elsewhere = await register({
      user: seat.id,
      callId: "x",
      cseq: 1,
      requestHost: "other.example.test",
    });
    expect(elsewhere.status).toBe(404);
    const foreignTo = await register({
      user: seat.id,
      callId: "x",
      cseq: 2,
      toHost: "other.example.test",
    });
    expect(foreignTo.status).toBe(404);
    const challenge = await register({ user: seat.id, callId: "y", cseq: 1 });
    const sha512 = answer(challenge, seat.id, seat.password).replace(
      "algorithm=MD5",
      "algorithm=SHA-512-256",
    );
    const again = await register({ user: seat.id, callId: "y", cseq: 2, authorization: sha512 });
    expect(again.status).toBe(401);
  });

  it("keeps at most 10 contacts per seat", async () => {
    const seat = await newSeat();
    const ten = Array.from({ length: 10 }, (_, i) => contactOf(6000 + i));
    expect(
      (await authenticated(seat, { callId: "many", cseq: 1, contacts: ten, expires: 60 })).status,
    ).toBe(200);
    const eleventh = await authenticated(seat, {
      callId: "many",
      cseq: 2,
      contacts: [contactOf(6010)],
      expires: 60,
    });
    expect(eleventh).toMatchObject({ status: 403, reason: "Too Many Registrations" });
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM call_control.sip_registrations WHERE seat_id = $1`,
      [seat.id],
    );
    expect(rows[0]).toEqual({ n: 10 });
  });

  it("refuses a captured Authorization replayed with another Call-ID and Contact, on any replica", async () => {
    const seat = await newSeat();
    const other = (await startSip({ pool, logger, settings: replicaSettings() }))!;
    try {
      const desk = contactOf(7001);
      const challenge = await register({ user: seat.id, callId: "desk", cseq: 1 });
      const captured = answer(challenge, seat.id, seat.password);
      const request = { user: seat.id, authorization: captured, expires: 3600 };
      const ok = await register({ ...request, callId: "desk", cseq: 2, contacts: [desk] });
      expect(ok.status).toBe(200);
      // The attacker's copies: a new Call-ID and its own Contact, to this replica and another.
      const evil = "<sip:evil@127.0.0.1:7666>";
      for (const port of [sip.endpoint.transport.port, other.endpoint.transport.port]) {
        const replay = await register({
          ...request,
          callId: `evil-${port}`,
          cseq: 1,
          contacts: [evil],
          port,
        });
        expect(replay.status).toBe(401);
        const fresh = replay.headers["www-authenticate"]!;
        expect(fresh[0]).toMatchObject({ stale: "true" });
        expect(unquote(fresh[0]!.nonce)).not.toBe(
          unquote(challenge.headers["www-authenticate"]![0]!.nonce),
        );
      }
      // A refused request's nc is used too (Expires is not covered by the digest either).
      const tooShort = answer(challenge, seat.id, seat.password, { nc: "00000002" });
      const refused = await register({
        ...request,
        authorization: tooShort,
        callId: "desk",
        cseq: 3,
        contacts: [desk],
        expires: 5,
      });
      expect(refused.status).toBe(423);
      const stretched = await register({
        ...request,
        authorization: tooShort,
        callId: "evil-2",
        cseq: 1,
        contacts: [evil],
      });
      expect(stretched.status).toBe(401);
      // The phone's own next use of the nonce (a higher nc) is accepted.
      const next = answer(challenge, seat.id, seat.password, { nc: "00000003" });
      const refresh = await register({
        ...request,
        authorization: next,
        callId: "desk",
        cseq: 4,
        contacts: [desk],
      });
      expect(refresh.status).toBe(200);
      // Copies sent to both replicas at once: exactly one is taken.
      const raced = answer(challenge, seat.id, seat.password, { nc: "00000004" });
      const answers = await Promise.all(
        [sip.endpoint.transport.port, other.endpoint.transport.port].map((port, i) =>
          register({
            ...request,
            authorization: raced,
            callId: `race-${i}`,
            cseq: 1,
            contacts: [desk],
            port,
          }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401]);
      const { rows } = await pool.query<{ contact_uri: string }>(
        `SELECT contact_uri FROM call_control.sip_registrations WHERE seat_id = $1`,
        [seat.id],
      );
      expect(rows).toEqual([{ contact_uri: "sip:desk@127.0.0.1:7001" }]);
    } finally {
      await other.stop();
    }
  });
});
