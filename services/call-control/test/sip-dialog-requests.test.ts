import { describe, expect, it } from "vitest";
import {
  ackFor2xx,
  answerOf,
  cancelOf,
  inDialogRequest,
  inviteOf,
} from "../src/sip/dialogs/dialog-requests.js";
import type { Dialog } from "../src/sip/dialogs/dialogs.js";
import { parseMessage, serialize, type SipResponse } from "../src/sip/stack/message.js";

const dialog: Dialog = {
  call_id: "call_1",
  leg: "trunk",
  sip_call_id: "abc@10.0.0.1",
  local_tag: "ours",
  remote_tag: "theirs",
  local_uri: "sip:+15550100001@10.0.0.1;user=phone",
  remote_uri: "sip:+15550100002@trunk.test:5060;user=phone",
  remote_target: "sip:gw@192.0.2.9:5070",
  route_set: ["<sip:proxy2.test;lr>", "<sip:proxy1.test;lr>"],
  invite_uri: "sip:+15550100002@trunk.test:5060;user=phone",
  invite_branch: "z9hG4bKinvite",
  invite_sent_by: "10.0.0.7:5060",
  invite_cseq: 2,
  local_cseq: 3,
  flow_transport: "udp",
  flow_address: "trunk.test",
  flow_port: 5060,
  remote_sdp: null,
  state: "confirmed",
  acked: true,
  owner_address: "10.0.0.7:5060",
  owner_instance: "i1",
  server_invite: null,
};

/** The request as the far end reads it off the wire. */
const wire = (message: Parameters<typeof serialize>[0]) => serialize(message);

describe("requests built from a dialog row (RFC 3261 §12.2.1.1)", () => {
  it("sends in-dialog requests to the remote target, through the route set, with both tags", () => {
    const bye = inDialogRequest(dialog, "BYE", 4);
    bye.headers.via = [
      {
        version: "2.0",
        protocol: "UDP",
        host: "10.0.0.1",
        port: 5060,
        params: { branch: "z9hG4bKb" },
      },
    ];
    const text = wire(bye);
    expect(text).toMatch(/^BYE sip:gw@192\.0\.2\.9:5070 SIP\/2\.0\r\n/);
    expect(text).toContain("Route: <sip:proxy2.test;lr>, <sip:proxy1.test;lr>\r\n");
    const parsed = parseMessage(text)!;
    expect(parsed.headers.from.params.tag).toBe("ours");
    expect(parsed.headers.to.params.tag).toBe("theirs");
    expect(parsed.headers.cseq).toEqual({ seq: 4, method: "BYE" });
    expect(parsed.headers["call-id"]).toBe("abc@10.0.0.1");
  });

  it("ACKs a 2xx with the INVITE's CSeq number, a new branch and the answer SDP if given", () => {
    const ack = ackFor2xx(dialog, "10.0.0.1:5060", "v=0\r\n");
    const again = ackFor2xx(dialog, "10.0.0.1:5060");
    expect(ack.headers.cseq).toEqual({ seq: 2, method: "ACK" });
    expect(ack.headers.via[0]!.params.branch).not.toBe(again.headers.via[0]!.params.branch);
    expect(ack.headers.via[0]!.params.branch).not.toBe("z9hG4bKinvite");
    expect(ack.content).toBe("v=0\r\n");
    expect(ack.headers["content-type"]).toBe("application/sdp");
    expect(again.content).toBeUndefined();
    expect(ackFor2xx(dialog, "10.0.0.1:5060", undefined, 5).headers.cseq.seq).toBe(5);
  });

  it("CANCELs the pending INVITE as it was sent: its URI, its Via (another process's), no To tag", () => {
    const { request, branch, sentBy } = cancelOf({ ...dialog, state: "calling", remote_tag: null });
    expect(request.uri).toBe(dialog.invite_uri);
    expect(request.headers.cseq).toEqual({ seq: 2, method: "CANCEL" });
    expect(request.headers.to.params).toEqual({});
    expect(request.headers.from.params.tag).toBe("ours");
    expect(branch).toBe("z9hG4bKinvite");
    expect(sentBy).toBe("10.0.0.7:5060");
  });

  it("builds the leg's INVITE with its CSeq and an SDP body when there is one", () => {
    const invite = inviteOf(dialog, { identity: "jws;info=<x>" }, "v=0\r\n");
    expect(invite.uri).toBe(dialog.invite_uri);
    expect(invite.headers.to).toEqual({ uri: dialog.remote_uri, params: {} });
    expect(invite.headers.cseq).toEqual({ seq: 2, method: "INVITE" });
    expect(invite.headers["content-type"]).toBe("application/sdp");
    expect(invite.headers.identity).toBe("jws;info=<x>");
    expect(inviteOf(dialog, {}).headers).not.toHaveProperty("content-type");
  });

  it("sends a leg's INVITE and its CANCEL through the preloaded route set (a phone's Path, RFC 3327 §5)", () => {
    const path = ["<sip:10.1.0.5:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>"];
    const calling = { ...dialog, state: "calling" as const, remote_tag: null, route_set: path };
    const route = `Route: ${path[0]}\r\n`;
    const invite = wire(inviteOf(calling, {}));
    expect(invite).toMatch(/^INVITE sip:\+15550100002@trunk\.test:5060;user=phone SIP\/2\.0\r\n/);
    expect(invite).toContain(route);
    expect(wire(cancelOf(calling).request)).toContain(route);
    // Without a route set: no Route at all.
    const direct = { ...calling, route_set: [] };
    expect(wire(inviteOf(direct, {}))).not.toContain("Route:");
    expect(wire(cancelOf(direct).request)).not.toContain("Route:");
  });

  it("reads a 2xx's tag, Contact and Record-Route (reversed into the route set)", () => {
    const response = parseMessage(
      [
        "SIP/2.0 200 OK",
        "Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKx",
        "From: <sip:a@x>;tag=ours",
        "To: <sip:b@y>;tag=theirs",
        "Call-ID: c@x",
        "CSeq: 1 INVITE",
        "Record-Route: <sip:proxy1.test;lr>, <sip:proxy2.test;lr>",
        "Contact: <sip:gw@192.0.2.9:5070>",
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n"),
    ) as SipResponse;
    expect(answerOf(response)).toEqual({
      tag: "theirs",
      target: "sip:gw@192.0.2.9:5070",
      routeSet: ["<sip:proxy2.test;lr>", "<sip:proxy1.test;lr>"],
    });
  });
});
