import smpp from "smpp";
import { describe, expect, it } from "vitest";
import { PduFramer } from "../src/carrier/smpp/pdu-connection.js";

const response = (sequence: number) =>
  new smpp.PDU("submit_sm_resp", {
    sequence_number: sequence,
    message_id: `id${sequence}`,
  }).toBuffer();

const withLength = (pdu: Buffer, length: number) => {
  const copy = Buffer.from(pdu);
  copy.writeUInt32BE(length, 0);
  return copy;
};

describe("the SMSC's byte stream cut into PDUs", () => {
  it("reads PDUs split across and packed into chunks", () => {
    const framer = new PduFramer();
    const bytes = Buffer.concat([response(1), response(2), response(3)]);
    const first = framer.push(bytes.subarray(0, 7));
    const rest = framer.push(bytes.subarray(7));
    expect(first.pdus).toEqual([]);
    expect(rest.malformed).toBeUndefined();
    expect(rest.pdus.map((pdu) => [pdu.command, pdu.sequence_number, pdu.message_id])).toEqual([
      ["submit_sm_resp", 1, "id1"],
      ["submit_sm_resp", 2, "id2"],
      ["submit_sm_resp", 3, "id3"],
    ]);
  });

  it.each([
    ["zero", 0],
    ["shorter than the header", 12],
    ["longer than PDU.maxLength", smpp.PDU.maxLength + 1],
    ["text, not SMPP", Buffer.from("HTTP").readUInt32BE(0)],
  ])("a command_length %s ends the stream after the PDUs before it", (_name, length) => {
    const framer = new PduFramer();
    const { pdus, malformed } = framer.push(
      Buffer.concat([response(1), withLength(response(2), length)]),
    );
    expect(pdus.map((pdu) => pdu.sequence_number)).toEqual([1]);
    expect(malformed?.message).toBe(`a PDU with command_length ${length}`);
    expect(framer.push(response(3))).toEqual({ pdus: [] });
  });

  it("a response to a command it does not know is malformed; an unknown request is not", () => {
    const unknown = (commandId: number) => {
      const bytes = Buffer.from(response(4).subarray(0, 16));
      bytes.writeUInt32BE(16, 0);
      bytes.writeUInt32BE(commandId, 4);
      return bytes;
    };
    expect(new PduFramer().push(unknown(0x80000777)).malformed?.message).toMatch(
      /unknown command_id 0x80000777/,
    );
    const request = new PduFramer().push(unknown(0x00000777));
    expect(request.malformed).toBeUndefined();
    expect(request.pdus.map((pdu) => pdu.command)).toEqual(["unknown"]);
  });
});
