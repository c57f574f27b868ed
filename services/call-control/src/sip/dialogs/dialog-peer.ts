import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Dialog } from "./dialogs.js";
import { allowedSource, type AddressBlock } from "../trunk-allow.js";

type Peer = Pick<Dialog, "leg" | "flow_address">;

/** The addresses a name resolves to now (the system resolver, as the transport's sends use). */
export type AddressResolver = (name: string) => Promise<string[]>;

const systemAddresses: AddressResolver = async (name) =>
  (await lookup(name, { all: true })).map((found) => found.address);

const plain = (source: string) => source.replace(/^::ffff:/i, "");

/**
 * Whether a request of a call's dialog came from that leg's peer, judged by address: the phone
 * leg's from the address its INVITE went to (where the seat's registration came from), the
 * trunk leg's from the trunk's address or SIP_TRUNK_ALLOW. Anyone else who learnt the Call-ID
 * and tags is refused: knowing them is no proof of being the peer.
 */
export function fromDialogPeerAddress(
  dialog: Peer,
  source: string,
  trunkAllow: readonly AddressBlock[],
): boolean {
  const address = plain(source);
  if (address === dialog.flow_address) return true;
  return dialog.leg === "trunk" && allowedSource(trunkAllow, address);
}

/**
 * `fromDialogPeerAddress` before the dialog is known, for SQL to judge by its row
 * (`closeOnPeerBye`): the source's address, and whether SIP_TRUNK_ALLOW admits it.
 */
export function peerSource(
  source: string,
  trunkAllow: readonly AddressBlock[],
): { address: string; trunkAllowed: boolean } {
  const address = plain(source);
  return { address, trunkAllowed: allowedSource(trunkAllow, address) };
}

/**
 * `fromDialogPeerAddress`, and for a trunk named by DNS (SIP_TRUNK_URI's host, the outbound
 * trunk leg's flow) the addresses that name resolves to now.
 */
export async function fromDialogPeer(
  dialog: Peer,
  source: string,
  trunkAllow: readonly AddressBlock[],
  resolve: AddressResolver = systemAddresses,
): Promise<boolean> {
  if (fromDialogPeerAddress(dialog, source, trunkAllow)) return true;
  if (dialog.leg !== "trunk" || isIP(dialog.flow_address) !== 0) return false;
  const addresses = await resolve(dialog.flow_address).catch(() => []);
  return addresses.map(plain).includes(plain(source));
}
