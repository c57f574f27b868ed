import { describe, expect, it } from "vitest";
import { fromDialogPeer, fromDialogPeerAddress } from "../src/sip/dialogs/dialog-peer.js";
import { parseAddressBlock } from "../src/sip/trunk-allow.js";

const allow = [parseAddressBlock("192.0.2.0/29")!];

describe("whether a dialog's request came from the leg's peer", () => {
  it("the phone leg: only the address its INVITE went to (its registration's source)", () => {
    const phone = { leg: "phone" as const, flow_address: "198.51.100.7" };
    expect(fromDialogPeerAddress(phone, "198.51.100.7", allow)).toBe(true);
    expect(fromDialogPeerAddress(phone, "::ffff:198.51.100.7", allow)).toBe(true);
    // Not even the trunk's addresses speak for a phone.
    expect(fromDialogPeerAddress(phone, "192.0.2.1", allow)).toBe(false);
    expect(fromDialogPeerAddress(phone, "198.51.100.8", allow)).toBe(false);
  });

  it("the trunk leg: its address or SIP_TRUNK_ALLOW", () => {
    const trunk = { leg: "trunk" as const, flow_address: "203.0.113.5" };
    expect(fromDialogPeerAddress(trunk, "203.0.113.5", allow)).toBe(true);
    expect(fromDialogPeerAddress(trunk, "192.0.2.6", allow)).toBe(true);
    expect(fromDialogPeerAddress(trunk, "192.0.2.9", allow)).toBe(false);
  });

  it("a trunk named by DNS (the outbound trunk leg's flow): the addresses the name resolves to", async () => {
    const trunk = { leg: "trunk" as const, flow_address: "localhost" };
    expect(await fromDialogPeer(trunk, "127.0.0.1", [])).toBe(true);
    expect(await fromDialogPeer(trunk, "127.0.0.2", [])).toBe(false);
    const unresolvable = { leg: "trunk" as const, flow_address: "trunk.invalid" };
    expect(await fromDialogPeer(unresolvable, "127.0.0.1", [])).toBe(false);
    // A phone's flow is always the address its REGISTER came from: never resolved.
    expect(await fromDialogPeer({ leg: "phone", flow_address: "localhost" }, "127.0.0.1", [])).toBe(
      false,
    );
  });
});
