/**
 * Types for the `rtpengine-client` package (davehorton/rtpengine-client 0.4), which ships none:
 * the UDP client of rtpengine's ng control protocol, as call-control's RTP relay uses it.
 * Requests and replies are the ng protocol's bencoded dictionaries (rtpengine's
 * docs/ng_control_protocol.md), as plain objects.
 */
declare module "rtpengine-client" {
  import type { EventEmitter } from "node:events";

  export interface NgReply {
    result: "ok" | "pong" | "error" | "load limit" | string;
    "error-reason"?: string;
    warning?: string;
    sdp?: string;
    [key: string]: unknown;
  }

  export type NgRequest = Record<string, unknown>;

  export class Client extends EventEmitter {
    constructor(options: { localPort?: number; localAddress?: string; timeout?: number });
    ping(port: number, host: string): Promise<NgReply>;
    offer(port: number, host: string, request: NgRequest): Promise<NgReply>;
    answer(port: number, host: string, request: NgRequest): Promise<NgReply>;
    delete(port: number, host: string, request: NgRequest): Promise<NgReply>;
    query(port: number, host: string, request: NgRequest): Promise<NgReply>;
    close(): void;
  }
}
