import { connect as connectTcp, createServer, type Server, type Socket } from "node:net";
import { connect as connectTls, createServer as createTlsServer } from "node:tls";
import { createLogger } from "@switchboard/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  selfSignedCertificate,
  type TestCertificate,
} from "@switchboard/test-support/tls-certificate";
import { eventually } from "@switchboard/test-support/waiting";
import { newClientBranch } from "../src/sip/stack/client-transactions.js";
import { startSipEndpoint, type SipEndpoint } from "../src/sip/stack/endpoint.js";
import {
  parseMessage,
  responseTo,
  serialize,
  type SipRequest,
  type SipResponse,
} from "../src/sip/stack/message.js";
import type { SipFlow } from "../src/sip/stack/transport.js";

const logger = createLogger("sip-stream-test", { level: "silent" });

const request = (method: string, branch: string, transport = "TLS", extra: string[] = []) =>
  [
    `${method} sip:127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/${transport} 127.0.0.1:9;branch=${branch};rport`,
    "Max-Forwards: 70",
    "From: <sip:probe@127.0.0.1>;tag=p1",
    "To: <sip:probe@127.0.0.1>",
    `Call-ID: ${branch}@test`,
    `CSeq: 1 ${method}`,
    ...extra,
    "",
    "",
  ].join("\r\n");
const withLength = (method: string, branch: string, transport = "TLS") =>
  request(method, branch, transport, ["Content-Length: 0"]);

const outbound = (port: number): SipRequest => ({
  method: "OPTIONS",
  uri: `sip:trunk@127.0.0.1:${port}`,
  version: "2.0",
  headers: {
    via: [],
    to: { uri: `sip:trunk@127.0.0.1:${port}`, params: {} },
    from: { uri: "sip:us@127.0.0.1", params: { tag: "ours" } },
    "call-id": `${newClientBranch()}@test`,
    cseq: { seq: 1, method: "OPTIONS" },
  },
});

/** A stream peer (the trunk): answers each request 200 on the connection it came on. */
function answeringPeer(server: Server, seen: SipRequest[], tls = false) {
  server.on(tls ? "secureConnection" : "connection", (socket: Socket) =>
    serveAnswers(socket, seen),
  );
}
function serveAnswers(socket: Socket, seen: SipRequest[]) {
  let buffered = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf("\r\n\r\n")) >= 0) {
      const text = buffered.slice(0, end + 4);
      buffered = buffered.slice(end + 4);
      const message = parseMessage(text) as SipRequest;
      seen.push(message);
      socket.write(serialize(responseTo(message, 200)), "latin1");
    }
  });
  socket.on("error", () => socket.destroy());
}
const listening = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );

/** SIP over TCP and TLS (RFC 3261 §18): listeners, framing by Content-Length, connections we open. */
describe("the SIP endpoint over TCP and TLS", () => {
  let certificate: TestCertificate;
  let endpoint: SipEndpoint;
  let dialable: SipFlow[] = [];

  beforeAll(async () => {
    certificate = selfSignedCertificate();
    endpoint = await startSipEndpoint({
      host: "127.0.0.1",
      port: 0,
      logger,
      handlers: {},
      tls: {
        listen: { port: 0, cert: certificate.cert, key: certificate.key },
        ca: certificate.cert,
      },
      dialable: (flow) =>
        dialable.some(
          (d) =>
            d.transport === flow.transport && d.address === flow.address && d.port === flow.port,
        ),
    });
  });
  afterAll(async () => {
    await endpoint?.stop();
    certificate?.remove();
  });

  /** A TLS connection to the listener that trusts its certificate, and what it received. */
  const tlsClient = async () => {
    const socket = connectTls({
      host: "127.0.0.1",
      port: endpoint.transport.tlsPort!,
      ca: certificate.cert,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("secureConnect", () => resolve());
      socket.once("error", reject);
    });
    const got = { text: "", closed: false };
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (got.text += chunk));
    socket.on("close", () => (got.closed = true));
    return { socket, got };
  };
  const statuses = (text: string) => text.match(/^SIP\/2\.0 \d+[^\r]*/gm) ?? [];

  it("listens for TLS on its own port and frames it: coalesced and split requests, answered on the connection with the TLS Via kept", async () => {
    expect(endpoint.transport.tlsPort).toBeGreaterThan(0);
    expect(endpoint.transport.tlsPort).not.toBe(endpoint.transport.port);
    expect(endpoint.sentBy("tls")).toBe(`127.0.0.1:${endpoint.transport.tlsPort}`);
    expect(endpoint.sentBy("udp")).toBe(`127.0.0.1:${endpoint.transport.port}`);
    const { socket, got } = await tlsClient();
    socket.write(withLength("OPTIONS", "z9hG4bKtls1") + withLength("OPTIONS", "z9hG4bKtls2"));
    const third = withLength("OPTIONS", "z9hG4bKtls3");
    for (const part of [third.slice(0, 15), third.slice(15, 100), third.slice(100)]) {
      socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await eventually(
      async () => statuses(got.text).length,
      (n) => n === 3,
      5_000,
    );
    expect(statuses(got.text)).toEqual(["SIP/2.0 200 OK", "SIP/2.0 200 OK", "SIP/2.0 200 OK"]);
    expect(got.text).toMatch(/Via: SIP\/2\.0\/TLS 127\.0\.0\.1:9;branch=z9hG4bKtls3/);
    // A double-CRLF keep-alive gets its single CRLF (RFC 5626 §3.5.1).
    const before = got.text.length;
    socket.write("\r\n\r\n");
    await eventually(
      async () => got.text.length,
      (n) => n > before,
      5_000,
    );
    expect(got.text.slice(before)).toBe("\r\n");
    socket.destroy();
  });

  it("answers a request without Content-Length on a stream 400 and closes the connection (TLS and TCP)", async () => {
    const { socket, got } = await tlsClient();
    socket.write(request("OPTIONS", "z9hG4bKnolen"));
    await eventually(
      async () => got.closed,
      (closed) => closed,
      5_000,
    );
    expect(statuses(got.text)).toEqual(["SIP/2.0 400 Missing Content-Length"]);

    const tcp = connectTcp(endpoint.transport.port, "127.0.0.1");
    const tcpGot = { text: "", closed: false };
    tcp.setEncoding("latin1");
    tcp.on("data", (chunk: string) => (tcpGot.text += chunk));
    tcp.on("close", () => (tcpGot.closed = true));
    tcp.write(request("OPTIONS", "z9hG4bKbig", "TCP", ["Content-Length: 900000"]));
    await eventually(
      async () => tcpGot.closed,
      (closed) => closed,
      5_000,
    );
    expect(statuses(tcpGot.text)).toEqual(["SIP/2.0 513 Message Too Large"]);
  });

  it("opens a TCP connection to a dialable peer (the trunk), sends with a TCP Via, and takes the answer on it", async () => {
    const seen: SipRequest[] = [];
    const server = createServer();
    answeringPeer(server, seen);
    const port = await listening(server);
    dialable = [{ transport: "tcp", address: "127.0.0.1", port }];
    try {
      const responses: SipResponse[] = [];
      endpoint.client.send(outbound(port), dialable[0]!, {
        onResponse: (response) => responses.push(response),
        onFailure: (reason) =>
          responses.push({ status: reason === "timeout" ? 408 : 503 } as SipResponse),
      });
      await eventually(
        async () => responses.length,
        (n) => n > 0,
        5_000,
      );
      expect(responses.map((r) => r.status)).toEqual([200]);
      expect(seen[0]!.headers.via[0]).toMatchObject({
        protocol: "TCP",
        host: "127.0.0.1",
        port: endpoint.transport.port,
      });
      // A second request reuses the connection.
      endpoint.client.send(outbound(port), dialable[0]!, {
        onResponse: (response) => responses.push(response),
        onFailure: () => undefined,
      });
      await eventually(
        async () => responses.length,
        (n) => n === 2,
        5_000,
      );
      const connections = await new Promise<number>((resolve) =>
        server.getConnections((_, count) => resolve(count)),
      );
      expect(connections).toBe(1);
    } finally {
      dialable = [];
      server.close();
    }
  });

  it("verifies a TLS trunk's certificate against the CA and speaks TLS with a TLS Via; an untrusted one fails the transaction at once", async () => {
    const seen: SipRequest[] = [];
    const server = createTlsServer({ cert: certificate.cert, key: certificate.key });
    answeringPeer(server, seen, true);
    const port = await listening(server);
    const stranger = selfSignedCertificate("stranger");
    const untrusted = createTlsServer({ cert: stranger.cert, key: stranger.key });
    answeringPeer(untrusted, [], true);
    const untrustedPort = await listening(untrusted);
    dialable = [
      { transport: "tls", address: "127.0.0.1", port },
      { transport: "tls", address: "127.0.0.1", port: untrustedPort },
    ];
    try {
      const outcomes: (number | string)[] = [];
      const events = {
        onResponse: (response: SipResponse) => outcomes.push(response.status),
        onFailure: (reason: string) => outcomes.push(reason),
      };
      endpoint.client.send(outbound(port), dialable[0]!, events);
      await eventually(
        async () => outcomes.length,
        (n) => n > 0,
        5_000,
      );
      expect(outcomes).toEqual([200]);
      expect(seen[0]!.headers.via[0]).toMatchObject({
        protocol: "TLS",
        port: endpoint.transport.tlsPort,
      });
      const started = Date.now();
      endpoint.client.send(outbound(untrustedPort), dialable[1]!, events);
      await eventually(
        async () => outcomes.length,
        (n) => n > 1,
        5_000,
      );
      expect(outcomes).toEqual([200, "transport"]);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      dialable = [];
      server.close();
      untrusted.close();
      stranger.remove();
    }
  });

  it("opens no connection to a peer that is not dialable (a phone is reached on its own connection only)", async () => {
    const server = createServer();
    let accepted = 0;
    server.on("connection", (socket) => {
      accepted += 1;
      socket.destroy();
    });
    const port = await listening(server);
    try {
      const outcomes: string[] = [];
      endpoint.client.send(
        outbound(port),
        { transport: "tcp", address: "127.0.0.1", port },
        {
          onResponse: () => outcomes.push("response"),
          onFailure: (reason) => outcomes.push(reason),
        },
      );
      expect(outcomes).toEqual(["transport"]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(accepted).toBe(0);
    } finally {
      server.close();
    }
  });
});
