import { describe, expect, it } from "vitest";
import { submitRefused } from "../src/carrier/smpp/command-status.js";
import { readReceipt } from "../src/carrier/smpp/receipt.js";

const text = (stat: string, id = "4f2a") =>
  `id:${id} sub:001 dlvrd:000 submit date:2611241200 done date:2611241201 stat:${stat} err:001 text:Order 42 shipped`;

// docs/api.md "Carriers" (smpp): which receipt moves a message where.
describe("SMSC delivery receipts", () => {
  it.each([
    ["DELIVRD", "delivered"],
    ["UNDELIV", "undelivered"],
    ["EXPIRED", "expired"],
    ["REJECTD", "failed"],
    ["DELETED", "failed"],
    ["UNKNOWN", "failed"],
    ["ENROUTE", undefined],
    ["ACCEPTD", undefined],
  ])("the text receipt stat:%s → %s", (stat, status) => {
    expect(readReceipt({ text: text(stat) })).toEqual({
      messageId: "4f2a",
      stat,
      status,
      error: "001",
    });
  });

  it.each([
    [2, "DELIVRD", "delivered"],
    [3, "EXPIRED", "expired"],
    [4, "DELETED", "failed"],
    [5, "UNDELIV", "undelivered"],
    [7, "UNKNOWN", "failed"],
    [8, "REJECTD", "failed"],
    [1, "ENROUTE", undefined],
  ])("the message_state TLV %i (%s) → %s, and wins over the text", (state, stat, status) => {
    expect(
      readReceipt({ receipted_message_id: "tlv-id", message_state: state, text: text("DELIVRD") }),
    ).toMatchObject({ messageId: "tlv-id", stat, status });
  });

  it("reads the TLVs alone (an empty short_message) and refuses a receipt naming no message", () => {
    expect(readReceipt({ receipted_message_id: "x1", message_state: 5, text: "" })).toEqual({
      messageId: "x1",
      stat: "UNDELIV",
      status: "undelivered",
    });
    expect(readReceipt({ text: "stat:DELIVRD" })).toBeUndefined();
    expect(readReceipt({ text: "hello" })).toBeUndefined();
  });
});

describe("refused submit_sm statuses", () => {
  it.each([
    [0x58, "transient", "ESME_RTHROTTLED"],
    [0x14, "transient", "ESME_RMSGQFUL"],
    [0x08, "transient", "ESME_RSYSERR"],
    [0x0b, "permanent", "ESME_RINVDSTADR"],
    [0x45, "permanent", "ESME_RSUBMITFAIL"],
    [0x400, "permanent", "unknown command status"],
  ])("0x%s is %s (%s) and keeps the status in its code", (status, kind, name) => {
    const error = submitRefused(status);
    expect(error).toMatchObject({ kind, code: `smpp-0x${status.toString(16).padStart(8, "0")}` });
    expect(error.message).toContain(name);
  });
});
