import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect as connectTcp, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import smpp, { type DecodedShortMessage, type PDU, type PDUFields, type Session } from "smpp";
import { afterEach, describe, expect, it } from "vitest";
import {
  encodeGsm,
  peakInWindow,
  splitText,
  startTestSmsc,
  type SubmitFault,
  type TestSmsc,
  type TestSmscOptions,
} from "../src/index.js";

const account = { systemId: "switchboard", password: "secret" };
const credentials = { system_id: account.systemId, password: account.password };
const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function smscWith(options: Partial<TestSmscOptions> = {}): Promise<TestSmsc> {
  const smsc = await startTestSmsc({ ...account, receiptDelayMs: 20, ...options });
  cleanups.push(() => smsc.stop());
  return smsc;
}

/** A plain `smpp` client, as the ESME under test would be, answering every deliver_sm. */
interface Client {
  session: Session;
  /** deliver_sm received, in order. */
  delivered: PDU[];
  closed: Promise<void>;
  request(command: string, fields?: PDUFields): Promise<PDU>;
}

async function connect(
  smsc: { host: string; port: number },
  answer: (pdu: PDU) => number = () => 0,
): Promise<Client> {
  const session = smpp.connect({ host: smsc.host, port: smsc.port });
  session.on("error", () => undefined);
  const closed = once(session, "close").then(() => undefined);
  cleanups.push(() => session.destroy());
  await once(session, "connect");
  const delivered: PDU[] = [];
  session.on("deliver_sm", (pdu) => {
    delivered.push(pdu);
    session.send(pdu.response({ command_status: answer(pdu) }));
  });
  const request = (command: string, fields: PDUFields = {}) =>
    new Promise<PDU>((resolve) => session.send(new smpp.PDU(command, fields), resolve));
  return { session, delivered, closed, request };
}

async function bound(
  smsc: { host: string; port: number },
  command = "bind_transceiver",
  answer?: (pdu: PDU) => number,
): Promise<Client> {
  const client = await connect(smsc, answer);
  const response = await client.request(command, credentials);
  expect(response.command_status).toBe(0);
  return client;
}

const submit = (client: Client, destination: string, text = "Hello", more: PDUFields = {}) =>
  client.request("submit_sm", {
    source_addr: "+14155550100",
    destination_addr: destination,
    registered_delivery: 1,
    data_coding: 0,
    short_message: text,
    ...more,
  });

/** The text of a received PDU, as the library decoded it. */
function textOf(pdu: PDU): string {
  const { message } = pdu.short_message as DecodedShortMessage;
  if (typeof message !== "string") throw new Error("short_message was not decoded to text");
  return message;
}

describe("binds", () => {
  it("binds the account (any bind type) and refuses everything else", async () => {
    const smsc = await smscWith();
    await bound(smsc, "bind_transmitter");
    await bound(smsc, "bind_receiver");
    const client = await bound(smsc);
    const again = await client.request("bind_transceiver", credentials);
    expect(again.command_status).toBe(smpp.ESME_RALYBND);

    const other = await connect(smsc);
    const wrongPassword = await other.request("bind_transceiver", {
      system_id: account.systemId,
      password: "nope",
    });
    expect(wrongPassword.command_status).toBe(smpp.ESME_RINVPASWD);
    const wrongId = await other.request("bind_transceiver", { system_id: "x", password: "secret" });
    expect(wrongId.command_status).toBe(smpp.ESME_RINVSYSID);
    smsc.refuseBinds(true);
    const refused = await other.request("bind_transceiver", credentials);
    expect(refused.command_status).toBe(smpp.ESME_RBINDFAIL);
    smsc.refuseBinds(false);

    expect(smsc.binds.map((bind) => [bind.command, bind.status])).toEqual([
      ["bind_transmitter", 0],
      ["bind_receiver", 0],
      ["bind_transceiver", 0],
      ["bind_transceiver", smpp.ESME_RALYBND],
      ["bind_transceiver", smpp.ESME_RINVPASWD],
      ["bind_transceiver", smpp.ESME_RINVSYSID],
      ["bind_transceiver", smpp.ESME_RBINDFAIL],
    ]);
    expect(smsc.bound()).toBe(3);
  });

  it("answers enquire_link, nacks unknown commands, and closes after unbind", async () => {
    const smsc = await smscWith();
    const client = await bound(smsc);
    expect((await client.request("enquire_link")).command).toBe("enquire_link_resp");
    const nack = await client.request("data_sm", { destination_addr: "1" });
    expect([nack.command, nack.command_status]).toEqual(["generic_nack", smpp.ESME_RINVCMDID]);
    const unbound = await client.request("unbind");
    expect(unbound.command).toBe("unbind_resp");
    await client.closed;
    expect(smsc.pdus.filter((pdu) => pdu.direction === "in").map((pdu) => pdu.command)).toEqual([
      "bind_transceiver",
      "enquire_link",
      "data_sm",
      "unbind",
    ]);
  });
});

describe("submits and receipts", () => {
  it("answers a message id and delivers the receipt in text and TLVs", async () => {
    const smsc = await smscWith();
    const client = await bound(smsc);
    const response = await submit(client, "+14155550120", "Hello {world} €5, see you");
    expect(response.command_status).toBe(0);
    const messageId = response.message_id!;
    expect(messageId).toMatch(/^[0-9a-f]{14}$/);
    expect(smsc.submits[0]).toMatchObject({
      messageId,
      destination: "+14155550120",
      dataCoding: 0,
      registeredDelivery: 1,
      text: "Hello {world} €5, see you",
      receipt: "DELIVRD",
    });

    await smsc.waitFor(() => smsc.receipts[0]?.result === "ok");
    const [receipt] = client.delivered;
    expect(receipt!.esm_class).toBe(smpp.ESM_CLASS.MC_DELIVERY_RECEIPT);
    expect([receipt!.source_addr, receipt!.destination_addr]).toEqual([
      "+14155550120",
      "+14155550100",
    ]);
    expect(textOf(receipt!)).toMatch(
      new RegExp(
        `^id:${messageId} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} ` +
          "stat:DELIVRD err:000 text:Hello \\{world\\} €5, se$",
      ),
    );
    expect(receipt!.receipted_message_id).toBe(messageId);
    expect(receipt!.message_state).toBe(smpp.MESSAGE_STATE.DELIVERED);
  });

  it("follows the destination's last digit", async () => {
    const smsc = await smscWith({ receiptFormat: "tlv" });
    const client = await bound(smsc);
    const statuses = [];
    for (const digit of "1679")
      statuses.push((await submit(client, `+1415555012${digit}`)).command_status);
    statuses.push((await submit(client, "+14155550126")).command_status);
    expect(statuses).toEqual([0, smpp.ESME_RTHROTTLED, smpp.ESME_RINVDSTADR, 0, 0]);
    expect(smsc.throttled).toMatchObject([{ destination: "+14155550126", reason: "outcome" }]);
    expect(smsc.refused).toMatchObject([{ status: smpp.ESME_RINVDSTADR }]);
    expect(smsc.submits.map((s) => s.receipt)).toEqual(["UNDELIV", "none", "DELIVRD"]);

    await smsc.waitFor(() => client.delivered.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 60)); // the 9 never gets one
    expect(client.delivered.map((pdu) => [pdu.message_state, textOf(pdu)])).toEqual([
      [smpp.MESSAGE_STATE.UNDELIVERABLE, ""],
      [smpp.MESSAGE_STATE.DELIVERED, ""],
    ]);
    const query = await client.request("query_sm", { message_id: smsc.submits[1]!.messageId });
    expect(query.message_state).toBe(smpp.MESSAGE_STATE.DELIVERED); // the receipt was "lost"
  });

  it("holds receipts until a receiver binds, and sends refused ones again", async () => {
    const smsc = await smscWith({ receiptRetryMs: 30 });
    const transmitter = await bound(smsc, "bind_transmitter");
    await submit(transmitter, "+14155550100");
    await smsc.waitFor(() => smsc.heldReceipts() === 1);
    expect(smsc.receipts).toEqual([]);

    let refusals = 1;
    const receiver = await bound(smsc, "bind_receiver", () =>
      refusals-- > 0 ? smpp.ESME_RX_T_APPN : 0,
    );
    await smsc.waitFor(() => smsc.receipts.some((attempt) => attempt.result === "ok"));
    expect(smsc.receipts.map((a) => [a.attempt, a.result, a.status])).toEqual([
      [1, "refused", smpp.ESME_RX_T_APPN],
      [2, "ok", 0],
    ]);
    expect(receiver.delivered).toHaveLength(2);
    expect(transmitter.delivered).toHaveLength(0);
  });

  it("sends a receipt again when it is not answered in time", async () => {
    const smsc = await smscWith({ receiptDelayMs: 0, responseTimeoutMs: 40, receiptRetryMs: 10 });
    const client = await connect(smsc);
    client.session.removeAllListeners("deliver_sm"); // never answers
    await client.request("bind_transceiver", credentials);
    await submit(client, "+14155550100");
    await smsc.waitFor(() => smsc.receipts.length >= 2);
    expect(smsc.receipts.slice(0, 2)).toMatchObject([
      { attempt: 1, result: "timeout" },
      { attempt: 2, sessionId: smsc.receipts[0]!.sessionId },
    ]);
  });

  it("reads concatenation from the UDH and the SAR TLVs, and UCS-2 text", async () => {
    const smsc = await smscWith();
    const client = await bound(smsc);
    await submit(client, "+14155550100", "", {
      data_coding: 8,
      short_message: { udh: Buffer.from([6, 8, 4, 0x12, 0x34, 2, 1]), message: "Привет 👋" },
    });
    await submit(client, "+14155550100", "part two", {
      sar_msg_ref_num: 7,
      sar_total_segments: 2,
      sar_segment_seqnum: 2,
    });
    expect(smsc.submits.map(({ udh, sar, text }) => ({ udh, sar, text }))).toEqual([
      { udh: { iei: 8, ref: 0x1234, total: 2, seq: 1 }, sar: undefined, text: "Привет 👋" },
      { udh: undefined, sar: { ref: 7, total: 2, seq: 2 }, text: "part two" },
    ]);
  });
});

describe("throttling", () => {
  it("refuses submits past maxPerSecond in any one-second window", async () => {
    const smsc = await smscWith({ maxPerSecond: 5 });
    const client = await bound(smsc);
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        submit(client, "+14155550100", `n${i}`, { registered_delivery: 0 }),
      ),
    ).then((responses) => responses.map((response) => response.command_status));
    expect(statuses.filter((status) => status === 0)).toHaveLength(5);
    expect(smsc.throttled.filter((t) => t.reason === "rate")).toHaveLength(3);
    expect(smsc.submitsPerSecond()).toBe(5);
    expect(peakInWindow([0, 500, 999, 1000, 1500, 2600], 1000)).toBe(3);
  });
});

describe("mobile-originated messages", () => {
  it("delivers a single message in GSM 03.38 or UCS-2", async () => {
    const smsc = await smscWith();
    const client = await bound(smsc, "bind_transceiver", () => 0);
    const result = await smsc.sendMo({
      from: "+14155550100",
      to: "+14155550123",
      text: "STOP €[1]",
    });
    expect(result.statuses).toEqual([0]);
    await smsc.sendMo({ from: "+14155550100", to: "12345", text: "Стоп" });
    const [gsm, ucs2] = client.delivered;
    expect(gsm).toMatchObject({
      esm_class: 0,
      data_coding: 0,
      source_addr: "14155550100",
      source_addr_ton: 1,
      destination_addr: "14155550123",
    });
    expect(textOf(gsm!)).toBe("STOP €[1]");
    expect([ucs2!.data_coding, ucs2!.dest_addr_ton, textOf(ucs2!)]).toEqual([8, 0, "Стоп"]);
  });

  it("sends concatenated parts in the order asked, with UDH or SAR", async () => {
    const smsc = await smscWith();
    const client = await bound(smsc, "bind_transceiver", (pdu) =>
      (pdu.short_message as DecodedShortMessage).udh ? smpp.ESME_RX_T_APPN : 0,
    );
    const text = "The quick brown fox. ".repeat(16); // 336 septets: 3 parts
    const udh = await smsc.sendMo({ from: "+1", to: "+2", text, order: [2, 0, 1] });
    expect(udh.statuses).toEqual([smpp.ESME_RX_T_APPN, smpp.ESME_RX_T_APPN, smpp.ESME_RX_T_APPN]);
    const headers = client.delivered.map(
      (pdu) => (pdu.short_message as DecodedShortMessage).udh![0]!,
    );
    expect(headers.map((ie) => [...ie])).toEqual([
      [0, 3, headers[0]![2], 3, 3],
      [0, 3, headers[0]![2], 3, 1],
      [0, 3, headers[0]![2], 3, 2],
    ]);
    const byPart = [...client.delivered].sort(
      (a, b) =>
        (a.short_message as DecodedShortMessage).udh![0]![4]! -
        (b.short_message as DecodedShortMessage).udh![0]![4]!,
    );
    expect(byPart.map(textOf).join("")).toBe(text);

    const sar = await smsc.sendMo({
      from: "+1",
      to: "+2",
      text: "é".repeat(100),
      parts: "sar",
      dataCoding: 8,
      order: [1, 0],
    });
    expect(sar.statuses).toEqual([0, 0]);
    const [second, first] = client.delivered.slice(3);
    expect([
      second!.sar_segment_seqnum,
      second!.sar_total_segments,
      first!.sar_segment_seqnum,
    ]).toEqual([2, 2, 1]);
    expect(textOf(first!) + textOf(second!)).toBe("é".repeat(100));
    expect(first!.sar_msg_ref_num).toBe(second!.sar_msg_ref_num);
  });

  it("splits without breaking escapes or surrogate pairs", () => {
    expect(splitText("ab€", 0, 3)).toEqual(["ab", "€"]);
    expect(splitText("a👋", 8, 2)).toEqual(["a", "👋"]);
    expect([...encodeGsm("@$€")]).toEqual([0x00, 0x02, 0x1b, 0x65]);
    expect(() => encodeGsm("👋")).toThrow(/not in the GSM 03.38 alphabet/);
  });
});

describe("broken connections", () => {
  it("drops every connection after n accepted submits, losing the next one and those in flight", async () => {
    const smsc = await smscWith({ receiptDelayMs: 200 });
    const client = await bound(smsc);
    smsc.dropAfterSubmits(2);
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) {
      client.session.send(
        new smpp.PDU("submit_sm", {
          destination_addr: "+14155550100",
          registered_delivery: 1,
          short_message: `m${i}`,
        }),
        (pdu) => answers.push(pdu.command_status),
      );
    }
    await client.closed;
    expect(answers).toEqual([0, 0]);
    expect(smsc.submits.map((s) => s.text)).toEqual(["m0", "m1"]);
    // The submit after the counted ones is the one lost in flight, whatever else arrived.
    expect(smsc.pdus.filter((pdu) => pdu.dropped).length).toBeGreaterThanOrEqual(1);
    await smsc.waitFor(() => smsc.bound() === 0);

    // The receipts were held for the ESME: a new bind gets them.
    const again = await bound(smsc);
    await smsc.waitFor(
      () => smsc.receipts.filter((attempt) => attempt.result === "ok").length === 2,
    );
    expect(again.delivered).toHaveLength(2);
    expect(smsc.receipts).toHaveLength(2);
  });

  it("drops every connection at once on demand, and re-sends receipts lost with them", async () => {
    const smsc = await smscWith({ receiptDelayMs: 0 });
    const silent = await connect(smsc, () => 0);
    silent.session.removeAllListeners("deliver_sm"); // never answers
    await silent.request("bind_receiver", credentials);
    const transmitter = await bound(smsc, "bind_transmitter");
    await submit(transmitter, "+14155550100");
    await smsc.waitFor(() => smsc.receipts.length === 1);
    await smsc.dropConnections();
    await Promise.all([silent.closed, transmitter.closed]);
    expect(smsc.receipts[0]).toMatchObject({ result: "lost" });

    const receiver = await bound(smsc, "bind_receiver");
    await smsc.waitFor(() => smsc.receipts[1]?.result === "ok");
    expect(receiver.delivered).toHaveLength(1);
    expect(smsc.receipts.map((attempt) => [attempt.attempt, attempt.result])).toEqual([
      [1, "lost"],
      [2, "ok"],
    ]);
  });
});

/**
 * A bound ESME on a bare socket, so that bytes a PDU parser would choke on can be read: `bytes`
 * holds everything received after the bind_resp.
 */
async function rawBound(smsc: TestSmsc) {
  const socket: Socket = connectTcp({ host: smsc.host, port: smsc.port });
  cleanups.push(() => void socket.destroy());
  await once(socket, "connect");
  let received = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  const ended = once(socket, "end").then(() => Date.now());
  socket.write(new smpp.PDU("bind_transceiver", { ...credentials, sequence_number: 1 }).toBuffer());
  await smsc.waitFor(() => received.length >= 16 && received.length >= received.readUInt32BE(0));
  const bindLength = received.readUInt32BE(0);
  return {
    ended,
    bytes: () => received.subarray(bindLength),
    submit(text: string) {
      const pdu = new smpp.PDU("submit_sm", {
        destination_addr: "14155550100",
        short_message: text,
        sequence_number: 2,
      });
      socket.write(pdu.toBuffer());
      return Date.now();
    },
  };
}

describe("submit faults", () => {
  it("accept-then-drop: the submit is recorded as accepted, never answered, the connection closed", async () => {
    const smsc = await smscWith();
    const esme = await rawBound(smsc);
    smsc.faultSubmits("accept-then-drop");
    esme.submit("taken");
    await esme.ended;
    expect(esme.bytes()).toHaveLength(0);
    expect(smsc.submits.map((s) => s.text)).toEqual(["taken"]);
    expect(smsc.pdus.at(-1)).toMatchObject({
      direction: "out",
      fault: "accept-then-drop",
      sequence: 2,
    });
  });

  it("slow-response: the submit_sm_resp comes after slowResponseMs", async () => {
    const smsc = await smscWith({ slowResponseMs: 300 });
    const esme = await rawBound(smsc);
    smsc.faultSubmits("slow-response");
    const sentAt = esme.submit("late");
    await smsc.waitFor(() => esme.bytes().length >= 16);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(280);
    const answer = esme.bytes();
    expect([answer.readUInt32BE(4), answer.readUInt32BE(8), answer.readUInt32BE(12)]).toEqual([
      0x80000004, 0, 2,
    ]);
    expect(smsc.submits.map((s) => s.text)).toEqual(["late"]);
  });

  it.each<[SubmitFault, (bytes: Buffer) => unknown, unknown]>([
    ["bad-length", (bytes) => bytes.readUInt32BE(0), 12],
    ["zero-length", (bytes) => bytes.readUInt32BE(0), 0],
    ["garbage", (bytes) => bytes.readUInt32BE(0), 0xdeadbeef],
  ])(
    "%s: the submit is recorded as accepted and answered with bytes that are no PDU",
    async (fault, read, expected) => {
      const smsc = await smscWith();
      const esme = await rawBound(smsc);
      smsc.faultSubmits(fault, 2);
      esme.submit("first");
      await smsc.waitFor(() => esme.bytes().length >= 4);
      expect(read(esme.bytes())).toBe(expected);
      expect(smsc.submits.map((s) => s.text)).toEqual(["first"]);
      expect(() => smsc.faultSubmits(fault, 0)).toThrow(RangeError);
    },
  );
});

describe("the CLI", () => {
  /** The built CLI, as npm's bin runs it (npm test builds first; so does `tsc -b test/smsc`). */
  async function startCli() {
    const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
    const child = spawn(process.execPath, [
      cli,
      "--port",
      "0",
      "--system-id",
      "switchboard",
      "--password",
      "secret",
    ]);
    cleanups.push(() => void child.kill("SIGKILL"));
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const port = await new Promise<number>((resolve) => {
      child.stdout.on("data", () => {
        const match = /listening on [\d.]+:(\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
    });
    return { child, port, output: () => output };
  }

  it("logs binds and MO messages without the password, takes mo on stdin, stops on SIGTERM", async () => {
    const { child, port, output: logged } = await startCli();
    const client = await bound({ host: "127.0.0.1", port });
    child.stdin.write("mo +14155550100 +14155550123 STOP now\n");
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (client.delivered.length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    expect(textOf(client.delivered[0]!)).toBe("STOP now");
    client.session.on("unbind", (pdu: PDU) => client.session.send(pdu.response()));
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    const output = logged();
    expect(output).toMatch(/bind session=1 bind_transceiver system_id=switchboard ESME_ROK/);
    expect(output).toMatch(/mo session=1 from=\+14155550100 to=\+14155550123 parts=1 ESME_ROK\n/);
    expect(output).not.toMatch(/secret|STOP/);
  });

  it("arms a submit fault from stdin: fault accept-then-drop", async () => {
    const { child, port, output } = await startCli();
    const client = await bound({ host: "127.0.0.1", port });
    child.stdin.write("fault accept-then-drop\n");
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (/fault accept-then-drop armed for 1/.test(output())) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    client.session.send(new smpp.PDU("submit_sm", { destination_addr: "14155550100" }));
    await client.closed;
    expect(output()).toMatch(/fault session=1 id=\w+ accept-then-drop\n/);
  });
});
