import { expect } from "vitest";
import type { MessagingPlatform } from "./platform-harness.js";

type Json = Record<string, unknown>;

/** Any harness that calls the gateway (messaging's, the shared platform's, the mesh's). */
export type ApiClient = Pick<MessagingPlatform, "request">;

export interface MessageJson {
  id: string;
  status: string;
  channel: string;
  channel_used: string | null;
  fallback_applied: boolean;
  encoding: string;
  segments: number;
  body: string;
  from: string;
  to: string;
  error_code: string | null;
  keyword: string | null;
  auto_reply_id: string | null;
  in_reply_to: string | null;
  template_version: number | null;
  [key: string]: unknown;
}

export async function json<T = Json>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** Holds and assigns an available number whose capabilities include all of `needs` (and, with
 * `lacks`, none of those). Returns its E.164 form. */
export async function ownNumber(
  p: ApiClient,
  token: string,
  needs: string[],
  lacks: string[] = [],
  skip = 0,
): Promise<string> {
  const search = await p.request(
    `/v1/api/numbers/search?capabilities=${needs.join(",")}&limit=50`,
    { token },
  );
  expect(search.status).toBe(200);
  const page = await json<{ data: { number: string; capabilities: string[] }[] }>(search);
  const candidates = page.data.filter((n) => !lacks.some((c) => n.capabilities.includes(c)));
  const number = candidates[skip]?.number;
  if (!number)
    throw new Error(`no available number with ${needs.join(",")} and without ${lacks.join(",")}`);
  const hold = await p.request("/v1/api/numbers/hold", { method: "POST", token, json: { number } });
  expect(hold.status).toBe(201);
  const { id } = await json<{ id: string }>(hold);
  const assigned = await p.request(`/v1/api/numbers/holds/${id}/assign`, { method: "POST", token });
  expect(assigned.status).toBe(200);
  return number;
}

export async function createTemplate(
  p: ApiClient,
  token: string,
  body: string,
  channels = ["sms", "mms", "rcs"],
  name = `tpl-${Math.random().toString(36).slice(2, 10)}`,
): Promise<{ id: string; version: number; [key: string]: unknown }> {
  const response = await p.request("/v1/api/templates", {
    method: "POST",
    token,
    json: { name, channels, body },
  });
  expect(response.status).toBe(201);
  return json(response);
}

export async function createConsent(
  p: ApiClient,
  token: string,
  phoneNumber: string,
  channels = ["sms", "mms", "rcs"],
): Promise<{ id: string; [key: string]: unknown }> {
  const response = await p.request("/v1/api/consents", {
    method: "POST",
    token,
    json: {
      phone_number: phoneNumber,
      channels,
      source: "web_form",
      evidence: { form: "https://example.com/signup" },
    },
  });
  expect(response.status).toBe(201);
  return json(response);
}

export function send(
  p: ApiClient,
  token: string,
  payload: Json,
  headers: Record<string, string> = {},
) {
  return p.request("/v1/api/messages/send", { method: "POST", token, json: payload, headers });
}

/** An SMS of `template` ({{n}} = 42) to a consenting `to`; the accepted message (202). */
export async function sendWithConsent(
  p: ApiClient,
  token: string,
  message: { to: string; from: string; templateId: string; extra?: Json },
): Promise<MessageJson> {
  const consent = await createConsent(p, token, message.to);
  const response = await send(p, token, {
    channel: "sms",
    to: message.to,
    from: message.from,
    template_id: message.templateId,
    variables: { n: "42" },
    consent_id: consent.id,
    ...message.extra,
  });
  expect(response.status).toBe(202);
  return json<MessageJson>(response);
}

/** Polls the message until `done` holds (or fails after `timeoutMs`). */
export async function waitForMessage(
  p: ApiClient,
  token: string,
  id: string,
  done: (message: MessageJson) => boolean,
  timeoutMs = 15_000,
): Promise<MessageJson> {
  const deadline = Date.now() + timeoutMs;
  let last: MessageJson | undefined;
  while (Date.now() < deadline) {
    const response = await p.request(`/v1/api/messages/${id}`, { token });
    last = await json<MessageJson>(response);
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  throw new Error(`message ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

export const terminal = (statuses: string[]) => (m: MessageJson) => statuses.includes(m.status);

/** The sandbox destination whose last digit is `digit` (+1555020 + 3 random digits + digit). */
export function sandboxNumber(digit: number): string {
  const middle = String(Math.floor(Math.random() * 1000)).padStart(3, "0");
  return `+1555020${middle}${digit}`;
}

/** The message's outbox events, in sequence order. */
export async function eventsOf(
  p: MessagingPlatform,
  id: string,
): Promise<{ type: string; sequence: number; data: Json }[]> {
  const { rows } = await p.pool.query<{ type: string; sequence: number; data: Json }>(
    "SELECT type, sequence::int AS sequence, data FROM messaging.outbox WHERE resource_id = $1 ORDER BY sequence",
    [id],
  );
  return rows;
}
