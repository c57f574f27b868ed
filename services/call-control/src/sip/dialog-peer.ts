import type { Dialog } from "./dialogs.js";
import { allowedSource, type Ipv4Block } from "./trunk-allow.js";

/**
 * Whether a request of a call's dialog came from that leg's peer: the phone leg's from the
 * address its INVITE went to (where the seat's registration came from), the trunk leg's from
 * the trunk's own address or SIP_TRUNK_ALLOW. Anyone else who learnt the Call-ID and tags is
 * refused: knowing them is no proof of being the peer.
 */
export function fromDialogPeer(
  dialog: Pick<Dialog, "leg" | "flow_address">,
  source: string,
  trunkAllow: readonly Ipv4Block[],
): boolean {
  const address = source.replace(/^::ffff:/i, "");
  if (address === dialog.flow_address) return true;
  return dialog.leg === "trunk" && allowedSource(trunkAllow, address);
}
