/**
 * Types for the `sip` package (kirm/sip.js 0.0.6), which ships none: the part call-control's
 * SIP layer uses, the message codec and the RFC 3261 §17 transaction state machines. Its own
 * transport (`create`/`start`) is not used (services/call-control/src/sip/README.md says why).
 *
 * A parsed message keeps header names in lower case, compact forms expanded (`v` → `via`). The
 * headers below are parsed into objects; any other header is a string, several occurrences
 * joined with ", ". A header the library fails to parse is left out of the message.
 */
declare module "sip" {
  /** `sip:user:password@host:port;params?headers`; `port` is NaN when absent. */
  export interface SipUri {
    schema: string;
    user?: string;
    password?: string;
    host: string;
    port: number;
    params: Record<string, string | null>;
    headers: Record<string, string>;
  }

  /** A name-addr or addr-spec with its header parameters (`tag`, `expires`, …). */
  export interface NameAddress {
    /** The display name as written (quotes kept). */
    name?: string;
    uri: string;
    params: Record<string, string | null>;
  }

  export interface Via {
    version: string;
    /** `UDP`, `TCP`, … as written. */
    protocol: string;
    host: string;
    port?: number;
    /** `branch`, `received`, `rport` (null when present without a value), … */
    params: Record<string, string | null>;
  }

  export interface CSeq {
    seq: number;
    method: string;
  }

  /**
   * An Authorization / WWW-Authenticate credential: `scheme` and each parameter as written,
   * quoted values with their quotes.
   */
  export interface AuthHeader {
    scheme: string;
    [parameter: string]: string | undefined;
  }

  export interface Headers {
    via?: Via[];
    to?: NameAddress;
    from?: NameAddress;
    "call-id"?: string;
    cseq?: CSeq;
    contact?: NameAddress[] | "*";
    /**
     * Route, Record-Route and Path: call-control reads them itself (their URIs as written, IPv6
     * references too: services/call-control/src/sip/stack/address-headers.ts).
     */
    route?: Array<Omit<NameAddress, "uri"> & { uri: SipUri | string }>;
    "record-route"?: Array<Omit<NameAddress, "uri"> & { uri: SipUri | string }>;
    /** RFC 3327 (a REGISTER's proxies). */
    path?: Array<Omit<NameAddress, "uri"> & { uri: SipUri | string }>;
    "content-length"?: number;
    "www-authenticate"?: AuthHeader[];
    "proxy-authenticate"?: AuthHeader[];
    authorization?: AuthHeader[];
    "proxy-authorization"?: AuthHeader[];
    [name: string]: unknown;
  }

  export interface Message {
    /** Requests only. */
    method?: string;
    /** Requests only: the Request-URI as written (or an object to serialize). */
    uri?: string | SipUri;
    /** Responses only. */
    status?: number;
    reason?: string;
    version?: string;
    headers: Headers;
    /** The body as a binary string. */
    content?: string;
  }

  /** One datagram (or any complete message) → a message, or undefined when it is not one. */
  export function parse(data: Buffer | string): Message | undefined;
  /** A message → its wire form as a binary string; sets Content-Length from `content`. */
  export function stringify(message: Message): string;
  export function parseUri(uri: string | SipUri): SipUri | undefined;
  export function stringifyUri(uri: string | SipUri): string;
  /** A response to `request`: its Via, To, From, Call-ID and CSeq (the objects themselves). */
  export function makeResponse(
    request: Message,
    status: number,
    reason?: string,
    extension?: { headers?: Headers; content?: string },
  ): Message;
  /** `z9hG4bK` and random characters (RFC 3261 §8.1.1.7). */
  export function generateBranch(): string;

  /**
   * Frames a byte stream (TCP) into messages: call the returned function with each chunk (a
   * binary string). `onFlood` when headers exceed `maxBytesHeaders` or a body exceeds
   * `maxContentLength`; a message without Content-Length is dropped.
   */
  export function makeStreamParser(
    onMessage: (message: Message) => void,
    onFlood?: () => void,
    maxBytesHeaders?: number,
    maxContentLength?: number,
  ): (chunk: string) => void;

  /** What a transaction sends through: one flow (UDP peer or TCP connection). */
  export interface Connection {
    protocol: string;
    send(message: Message): void;
    /** Called once when the transaction that held the connection ends. */
    release(): void;
  }

  /** A transaction: `message` feeds it what the network brought (a retransmission, a response). */
  export interface ServerTransaction {
    /** The transaction user's response (a final one moves it to Completed). */
    send(response: Message): void;
    message(request: Message): void;
    shutdown(): void;
  }

  export interface ClientTransaction {
    message(response: Message, remote?: unknown): void;
    shutdown(): void;
  }

  export interface TransactionLayer {
    /** Keyed by CSeq method, Call-ID and the top Via's branch (ACK goes to its INVITE). */
    createServerTransaction(request: Message, connection: Connection): ServerTransaction;
    /**
     * Sends `request` (a fresh branch unless CANCEL) and retransmits it on unreliable flows
     * (timers A/E); `callback` gets every response, and a 408 made up on timeout (B/F).
     */
    createClientTransaction(
      connection: Connection,
      request: Message,
      callback: (response: Message) => void,
    ): ClientTransaction;
    getServer(message: Message): ServerTransaction | undefined;
    getClient(message: Message): ClientTransaction | undefined;
    /** Ends every transaction (their timers are cleared, connections released). */
    destroy(): void;
  }

  export function makeTransactionLayer(
    options: Record<string, unknown>,
    open: (target: unknown, onError?: (error: Error) => void) => Connection,
  ): TransactionLayer;
}
