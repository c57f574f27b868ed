import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { parseRetryAfter } from "./retry-after.js";
import type { CheckedTarget } from "./url-guard.js";

/**
 * One HTTP POST of a delivery to a checked target. The connection goes to the addresses the
 * guard checked (the `lookup` is pinned to them; TLS SNI and Host keep the hostname), redirects
 * are never followed (node:http does not), and the whole exchange up to the response headers
 * has one time budget. The response body is drained and discarded, never stored.
 */
export type SendOutcome =
  | { kind: "response"; statusCode: number; retryAfterMs: number | undefined; durationMs: number }
  | { kind: "error"; errorClass: string; durationMs: number };

export interface SendRequest {
  target: CheckedTarget;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

const agentOptions = { keepAlive: true, maxSockets: 512, maxFreeSockets: 256, timeout: 4_000 };
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
const maxDrainBytes = 64 * 1024;
export const userAgent = "Switchboard-Webhooks/1.0";

class AttemptTimeout extends Error {
  override readonly name = "AttemptTimeout";
}

/** A lookup that answers only with the guard's checked addresses. */
export function pinnedLookup(target: CheckedTarget): LookupFunction {
  return ((
    _hostname: string,
    options: { all?: boolean; family?: number },
    callback: (...args: unknown[]) => void,
  ) => {
    const family = options?.family === 4 || options?.family === 6 ? options.family : undefined;
    const candidates = target.addresses.filter((a) => family === undefined || a.family === family);
    if (candidates.length === 0) {
      callback(
        Object.assign(new Error("no checked address of that family"), { code: "ENOTFOUND" }),
      );
    } else if (options?.all) {
      callback(null, candidates);
    } else {
      callback(null, candidates[0]!.address, candidates[0]!.family);
    }
  }) as unknown as LookupFunction;
}

export function sendDelivery(request: SendRequest): Promise<SendOutcome> {
  const { target, body, timeoutMs } = request;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const secure = target.url.protocol === "https:";
  const payload = Buffer.from(body, "utf8");
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = (secure ? https : http).request({
      method: "POST",
      protocol: target.url.protocol,
      host: target.hostname,
      port: target.url.port || (secure ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      agent: secure ? agents.https : agents.http,
      lookup: pinnedLookup(target),
      headers: {
        ...request.headers,
        "content-type": "application/json",
        "content-length": String(payload.length),
        "user-agent": userAgent,
        host: target.url.host,
      },
    });
    const timer = setTimeout(() => req.destroy(new AttemptTimeout()), timeoutMs);
    req.on("response", (res) => {
      const retryAfter = res.headers["retry-after"];
      settle({
        kind: "response",
        statusCode: res.statusCode ?? 0,
        retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
        durationMs: elapsed(),
      });
      res.setTimeout(timeoutMs, () => res.destroy());
      let drained = 0;
      res.on("data", (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > maxDrainBytes) res.destroy();
      });
      res.on("error", () => undefined);
    });
    req.on("error", (error) =>
      settle({ kind: "error", errorClass: errorClass(error), durationMs: elapsed() }),
    );
    req.end(payload);
  });
}

/** A stable, secret-free name for a transport failure. */
export function errorClass(error: unknown): string {
  if (error instanceof AttemptTimeout) return "timeout";
  const code = (error as { code?: unknown }).code;
  const text = typeof code === "string" ? code : "";
  if (text === "ECONNREFUSED") return "connection_refused";
  if (text === "ECONNRESET" || text === "EPIPE" || text === "ERR_STREAM_PREMATURE_CLOSE")
    return "connection_reset";
  if (text === "ETIMEDOUT" || text === "ESOCKETTIMEDOUT") return "timeout";
  if (text === "EHOSTUNREACH" || text === "ENETUNREACH" || text === "EADDRNOTAVAIL")
    return "unreachable";
  if (text === "ENOTFOUND" || text === "EAI_AGAIN") return "dns_failure";
  if (
    /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/.test(
      text,
    )
  ) {
    return "tls_error";
  }
  if (text === "HPE_INVALID_CONSTANT" || text.startsWith("HPE_")) return "invalid_response";
  return "network_error";
}

/** The error class of a received status: delivered (2xx) or why not. */
export const statusClass = (
  statusCode: number,
): "delivered" | "redirect" | "gone" | "http_status" =>
  statusCode >= 200 && statusCode < 300
    ? "delivered"
    : statusCode === 410
      ? "gone"
      : statusCode >= 300 && statusCode < 400
        ? "redirect"
        : "http_status";
