import { CarrierError } from "../carrier.js";

/** Command statuses worth another try: the SMSC is busy, not refusing the message. */
const transient: Record<number, string> = {
  0x08: "ESME_RSYSERR",
  0x14: "ESME_RMSGQFUL",
  0x58: "ESME_RTHROTTLED",
  0x64: "ESME_RX_T_APPN",
};

const permanent: Record<number, string> = {
  0x01: "ESME_RINVMSGLEN",
  0x02: "ESME_RINVCMDLEN",
  0x0a: "ESME_RINVSRCADR",
  0x0b: "ESME_RINVDSTADR",
  0x0c: "ESME_RINVMSGID",
  0x33: "ESME_RINVNUMDESTS",
  0x45: "ESME_RSUBMITFAIL",
  0x48: "ESME_RINVSRCTON",
  0x49: "ESME_RINVSRCNPI",
  0x50: "ESME_RINVDSTTON",
  0x51: "ESME_RINVDSTNPI",
  0x61: "ESME_RINVSCHED",
  0x62: "ESME_RINVEXPIRY",
  0x66: "ESME_RX_P_APPN",
  0x67: "ESME_RX_R_APPN",
};

export const isThrottling = (status: number): boolean => status === 0x58 || status === 0x14;

const hex = (status: number) => `0x${status.toString(16).padStart(8, "0")}`;

/**
 * A refused submit_sm as a CarrierError that keeps the SMPP status: the code is
 * `smpp-<hex status>` (kept on the message as error_code) and the message names it.
 */
export function submitRefused(status: number): CarrierError {
  const name = transient[status] ?? permanent[status] ?? "unknown command status";
  const kind = status in transient ? "transient" : "permanent";
  return new CarrierError(
    `smpp-${hex(status)}`,
    `the SMSC refused the submit with ${name} (${hex(status)})`,
    kind,
  );
}
