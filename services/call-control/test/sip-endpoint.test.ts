import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { createLogger, metricsRegistry } from "@switchboard/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeSipPort } from "@switchboard/test-support/sip-peers";
import { startSipEndpoint, type SipEndpoint } from "../src/sip/stack/endpoint.js";
import { parseMessage, responseTo, type SipResponse } from "../src/sip/stack/message.js";

const logger = createLogger("sip-endpoint-test", { level: "silent" });

const request = (method: string, branch: string, extra: string[] = []) =>
  [
    `${method} sip:127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:9;branch=${branch};rport`,
    "Max-Forwards: 70",
    "From: <sip:probe@127.0.0.1>;tag=p1",
    "To: <sip:probe@127.0.0.1>",
    `Call-ID: ${branch}@test`,
    `CSeq: 1 ${method}`,
    ...extra,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");

describe("the SIP endpoint on loopback (UDP and TCP)", () => {
  let endpoint: SipEndpoint;
  let registers = 0;

  beforeAll(async () => {
    endpoint = await startSipEndpoint({
      host: "127.0.0.1",
      port: 0,
      logger,
      handlers: {
        REGISTER: async (rq, { respond }) => {
          registers += 1;
          await new Promise((resolve) => setTimeout(resolve, 50));
          respond(responseTo(rq, 200));
        },
      },
    });
  });
  afterAll(() => endpoint?.stop());

  /** Sends datagrams from one socket; resolves with the responses received in `waitMs`. */
  async function overUdp(
    datagrams: string[],
    waitMs = 300,
    port = endpoint.transport.port,
  ): Promise<SipResponse[]> {
    const socket = createSocket("udp4");
    const responses: SipResponse[] = [];
    socket.on("message", (data) => responses.push(parseMessage(data) as SipResponse));
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    for (const datagram of datagrams) {
      socket.send(datagram, port, "127.0.0.1");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    socket.close();
    return responses;
  }

  it("answers OPTIONS 200 and an unhandled method 405 with Allow, back to the source port", async () => {
    const [options] = await overUdp([request("OPTIONS", "z9hG4bKopt1")]);
    expect(options).toMatchObject({ status: 200 });
    expect(options!.headers.allow).toBe("OPTIONS, REGISTER");
    expect(options!.headers.via[0]!.params.received).toBe("127.0.0.1");
    expect(Number(options!.headers.via[0]!.params.rport)).toBeGreaterThan(0);
    const [invite] = await overUdp([request("INVITE", "z9hG4bKinv1")]);
    expect(invite).toMatchObject({ status: 405, reason: "Method Not Allowed" });
    const counted = await metricsRegistry.getSingleMetricAsString("sip_responses_total");
    expect(counted).toMatch(/sip_responses_total\{method="OPTIONS",status="200"\} [1-9]/);
    expect(counted).toMatch(/sip_responses_total\{method="INVITE",status="405"\} 1/);
  });

  it("answers OPTIONS 503 with Retry-After once draining, every other request as before", async () => {
    const draining = await startSipEndpoint({
      host: "127.0.0.1",
      port: 0,
      logger,
      handlers: { REGISTER: async (rq, { respond }) => respond(responseTo(rq, 200)) },
    });
    try {
      const port = draining.transport.port;
      const [before] = await overUdp([request("OPTIONS", "z9hG4bKdrain0")], 300, port);
      expect(before).toMatchObject({ status: 200 });
      draining.drain(42);
      const [options] = await overUdp([request("OPTIONS", "z9hG4bKdrain1")], 300, port);
      expect(options).toMatchObject({ status: 503, reason: "Service Unavailable" });
      expect(options!.headers["retry-after"]).toBe("42");
      const [register] = await overUdp([request("REGISTER", "z9hG4bKdrain2")], 300, port);
      expect(register).toMatchObject({ status: 200 });
      const [invite] = await overUdp([request("INVITE", "z9hG4bKdrain3")], 300, port);
      expect(invite).toMatchObject({ status: 405 });
      const counted = await metricsRegistry.getSingleMetricAsString("sip_responses_total");
      expect(counted).toMatch(/sip_responses_total\{method="OPTIONS",status="503"\} 1/);
    } finally {
      await draining.stop();
    }
  });

  it("answers a retransmitted request from its transaction, without handling it twice", async () => {
    const before = registers;
    const datagram = request("REGISTER", "z9hG4bKreg1");
    const socket = createSocket("udp4");
    const responses: SipResponse[] = [];
    socket.on("message", (data) => responses.push(parseMessage(data) as SipResponse));
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    const send = async (waitMs: number) => {
      socket.send(datagram, endpoint.transport.port, "127.0.0.1");
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    };
    // Retransmitted while the handler works: absorbed, one response.
    await send(10);
    await send(200);
    expect(responses).toHaveLength(1);
    // Retransmitted after the final response: the very same response again (same To tag).
    await send(10);
    await send(200);
    socket.close();
    expect(registers - before).toBe(1);
    expect(responses).toHaveLength(3);
    expect(new Set(responses.map((r) => r.headers.to.params.tag)).size).toBe(1);
  });

  it("drops what is not SIP and keeps serving", async () => {
    expect(await overUdp(["GET / HTTP/1.1\r\n\r\n", "\u0000\u0001"], 100)).toEqual([]);
    expect(await overUdp([request("OPTIONS", "z9hG4bKopt2")])).toHaveLength(1);
  });

  it("frames TCP: two requests in one write, one request over three writes", async () => {
    const socket = connect(endpoint.transport.port, "127.0.0.1");
    socket.setEncoding("binary");
    let received = "";
    socket.on("data", (chunk: string) => (received += chunk));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(request("OPTIONS", "z9hG4bKtcp1") + request("OPTIONS", "z9hG4bKtcp2"));
    const third = request("OPTIONS", "z9hG4bKtcp3");
    for (const part of [third.slice(0, 20), third.slice(20, 90), third.slice(90)]) {
      socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const statuses = received.match(/^SIP\/2\.0 \d+/gm);
    expect(statuses).toEqual(["SIP/2.0 200", "SIP/2.0 200", "SIP/2.0 200"]);
    expect(received).toContain("branch=z9hG4bKtcp3");
    socket.destroy();
  });

  it("stops: the sockets close, open TCP connections too, and the port is free again", async () => {
    // Below the kernel's ephemeral range, so no other process's outgoing socket takes the port
    // between stop and restart.
    const other = await startBelowEphemeralRange();
    const port = other.transport.port;
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await other.stop();
    await closed;
    const again = await startSipEndpoint({ host: "127.0.0.1", port, logger, handlers: {} });
    expect(again.transport.port).toBe(port);
    await expect(
      startSipEndpoint({ host: "127.0.0.1", port, logger, handlers: {} }),
    ).rejects.toThrow(/EADDRINUSE/);
    await again.stop();
  });
});

async function startBelowEphemeralRange() {
  for (let attempt = 0; ; attempt++) {
    // This worker's slice of the SIP ports: a port drawn from the whole range could be one
    // another file has just found free for its own peer.
    const port = await freeSipPort();
    try {
      return await startSipEndpoint({ host: "127.0.0.1", port, logger, handlers: {} });
    } catch (error) {
      if (attempt >= 50 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}
