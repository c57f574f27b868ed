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

  export interface PDUFields {
    command_status?: number;
    sequence_number?: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
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
    data_coding?: number;
    short_message?: Buffer | string | DecodedShortMessage;
    message_id?: string;
    receipted_message_id?: string;
    message_state?: number;
    network_error_code?: Buffer;
    sar_msg_ref_num?: number;
    sar_total_segments?: number;
    sar_segment_seqnum?: number;
    message_payload?: Buffer | string | DecodedShortMessage;
    user_message_reference?: number;
    [field: string]: unknown;
  }

  export class PDU implements PDUFields {
    constructor(command: string, fields?: PDUFields);
    command: string;
    command_id: number;
    command_length: number;
    command_status: number;
    sequence_number: number;
    [field: string]: unknown;
    isResponse(): boolean;
    response(fields?: PDUFields): PDU;
    toBuffer(): Buffer;
  }

  export type ResponseCallback = (pdu: PDU) => void;

  export class Session extends EventEmitter {
    constructor(options: { socket: Socket } | Record<string, unknown>);
    socket: Socket;
    server?: Server;
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
    enquire_link(fields?: PDUFields | ResponseCallback, onResponse?: ResponseCallback): boolean;
    unbind(fields?: PDUFields | ResponseCallback, onResponse?: ResponseCallback): boolean;
    generic_nack(fields?: PDUFields): boolean;
  }

  export class Server extends NetServer {
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
  export const ESME_RBINDFAIL: number;
  export const ESME_RINVPASWD: number;
  export const ESME_RMSGQFUL: number;
  export const ESME_RSYSERR: number;
  export const ESME_RTHROTTLED: number;
  export const ESME_RX_T_APPN: number;
}
