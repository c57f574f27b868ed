/**
 * Types for the `smpp` package (farhadi/node-smpp 0.5), which ships none: the part of its
 * surface the messaging adapter and the test SMSC use. PDU fields are the SMPP 3.4 parameter
 * and TLV names; a received `short_message` arrives decoded as `{ udh?, message }`.
 */
declare module "smpp" {
  import type { EventEmitter } from "node:events";
  import type { Server as NetServer, Socket } from "node:net";

  export interface DecodedShortMessage {
    /** Each information element of the UDH, IEI first. */
    udh?: Buffer[];
    message: string | Buffer;
  }

  /**
   * A short_message to encode with a UDH: the whole header (its length octet first) and the
   * text, encoded by data_coding (a Buffer goes as is); esm_class gets the UDHI bit.
   */
  export interface ShortMessageWithUdh {
    udh: Buffer;
    message: string | Buffer;
  }

  export interface PDUFields {
    command_status?: number;
    sequence_number?: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
    addr_ton?: number;
    addr_npi?: number;
    address_range?: string;
    service_type?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    source_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    destination_addr?: string;
    esm_class?: number;
    protocol_id?: number;
    priority_flag?: number;
    schedule_delivery_time?: string | Date;
    validity_period?: string | Date;
    registered_delivery?: number;
    replace_if_present_flag?: number;
    data_coding?: number | null;
    sm_default_msg_id?: number;
    short_message?: Buffer | string | DecodedShortMessage | ShortMessageWithUdh;
    message_id?: string;
    /** query_sm_resp; a Date is encoded as an absolute SMPP time. */
    final_date?: string | Date;
    error_code?: number;
    receipted_message_id?: string;
    message_state?: number;
    network_error_code?: Buffer;
    sar_msg_ref_num?: number;
    sar_total_segments?: number;
    sar_segment_seqnum?: number;
    message_payload?: Buffer | string | DecodedShortMessage | ShortMessageWithUdh;
    user_message_reference?: number;
    [field: string]: unknown;
  }

  /**
   * A PDU carries its parameters and TLVs as own properties; the library fills in every
   * parameter of the command (defaults included) but only the TLVs given or received. A PDU
   * with a non-zero command_status is header only: its body is neither encoded nor kept.
   */
  export interface PDU extends PDUFields {
    /** The command's name; `"unknown"` for a command_id the library does not know. */
    command: string;
    command_id: number;
    command_length: number;
    command_status: number;
    sequence_number: number;
    isResponse(): boolean;
    /** The response to this request (same sequence_number); generic_nack for "unknown". */
    response(fields?: PDUFields): PDU;
    toBuffer(): Buffer;
  }
  export const PDU: {
    new (command: string, fields?: PDUFields): PDU;
    /** Decodes one whole PDU (command_length first); throws on bytes it cannot read. */
    new (encoded: Buffer): PDU;
    /** Longer PDUs are refused when read (default 16384). */
    maxLength: number;
  };

  export type ResponseCallback = (pdu: PDU) => void;

  /**
   * Besides these, a session emits each received PDU under its command's name (`"submit_sm"`,
   * `"unknown"`...). An `error` without a listener throws, as on any EventEmitter.
   */
  export type SessionEvents = {
    pdu: [pdu: PDU];
    /** After the PDU was written to the socket. */
    send: [pdu: PDU];
    error: [error: Error];
    close: [];
    connect: [];
    secureConnect: [];
  } & Record<Command | "unknown", [pdu: PDU]>;

  /** The commands the library knows (defs.commands). */
  export type Command =
    | "alert_notification"
    | "bind_receiver"
    | "bind_receiver_resp"
    | "bind_transmitter"
    | "bind_transmitter_resp"
    | "bind_transceiver"
    | "bind_transceiver_resp"
    | "broadcast_sm"
    | "broadcast_sm_resp"
    | "cancel_broadcast_sm"
    | "cancel_broadcast_sm_resp"
    | "cancel_sm"
    | "cancel_sm_resp"
    | "data_sm"
    | "data_sm_resp"
    | "deliver_sm"
    | "deliver_sm_resp"
    | "enquire_link"
    | "enquire_link_resp"
    | "generic_nack"
    | "outbind"
    | "query_broadcast_sm"
    | "query_broadcast_sm_resp"
    | "query_sm"
    | "query_sm_resp"
    | "replace_sm"
    | "replace_sm_resp"
    | "submit_multi"
    | "submit_multi_resp"
    | "submit_sm"
    | "submit_sm_resp"
    | "unbind"
    | "unbind_resp";

  export class Session extends EventEmitter<SessionEvents> {
    constructor(options: { socket: Socket } | Record<string, unknown>);
    socket: Socket;
    server?: Server;
    /**
     * Writes `pdu`, numbering a request that has no sequence_number (1, 2... per session). False,
     * with nothing sent, when the socket is no longer writable. `onResponse` is kept by sequence
     * number and is never called if the session closes first: there is no timeout.
     */
    send(pdu: PDU, onResponse?: ResponseCallback, onSent?: ResponseCallback): boolean;
    pause(): void;
    resume(): void;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    bind_transceiver(fields: PDUFields, onResponse?: ResponseCallback): boolean;
    submit_sm(fields: PDUFields, onResponse?: ResponseCallback, onSent?: ResponseCallback): boolean;
    deliver_sm(
      fields: PDUFields,
      onResponse?: ResponseCallback,
      onSent?: ResponseCallback,
    ): boolean;
    query_sm(fields: PDUFields, onResponse?: ResponseCallback): boolean;
    enquire_link(fields?: PDUFields | ResponseCallback, onResponse?: ResponseCallback): boolean;
    unbind(fields?: PDUFields | ResponseCallback, onResponse?: ResponseCallback): boolean;
    generic_nack(fields?: PDUFields): boolean;
  }

  export class Server extends NetServer {
    /** The sessions whose socket has not closed yet. */
    sessions: Session[];
  }

  export interface ConnectOptions {
    host: string;
    port: number;
    tls?: boolean;
    /** TLS options (servername, ca, rejectUnauthorized) pass through to tls.connect. */
    [option: string]: unknown;
    auto_enquire_link_period?: number;
  }

  export function connect(options: ConnectOptions, onConnect?: () => void): Session;
  export function createServer(
    options: Record<string, unknown>,
    onSession?: (session: Session) => void,
  ): Server;
  export function createServer(onSession: (session: Session) => void): Server;

  export const ESM_CLASS: Record<
    | "DATAGRAM"
    | "FORWARD"
    | "STORE_FORWARD"
    | "MC_DELIVERY_RECEIPT"
    | "DELIVERY_ACKNOWLEDGEMENT"
    | "USER_ACKNOWLEDGEMENT"
    | "UDH_INDICATOR",
    number
  >;
  export const MESSAGE_STATE: Record<
    | "SCHEDULED"
    | "ENROUTE"
    | "DELIVERED"
    | "EXPIRED"
    | "DELETED"
    | "UNDELIVERABLE"
    | "ACCEPTED"
    | "UNKNOWN"
    | "REJECTED"
    | "SKIPPED",
    number
  >;
  export const errors: Record<string, number>;
  export const ESME_ROK: number;
  export const ESME_RINVDSTADR: number;
  export const ESME_RINVCMDID: number;
  export const ESME_RINVBNDSTS: number;
  export const ESME_RALYBND: number;
  export const ESME_RBINDFAIL: number;
  export const ESME_RINVPASWD: number;
  export const ESME_RINVSYSID: number;
  export const ESME_RMSGQFUL: number;
  export const ESME_RSYSERR: number;
  export const ESME_RTHROTTLED: number;
  export const ESME_RX_T_APPN: number;
  export const ESME_RQUERYFAIL: number;
}
