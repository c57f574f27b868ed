import type { webhook } from "@switchboard/proto";
import type { AccountRpc } from "../backend-rpc.js";

/**
 * A request's `status_callback`, checked by the webhook service as a subscription's URL would
 * be (422 unsafe-webhook-url at #/status_callback/url) and normalised, before the call or
 * message that carries it is created; undefined when the request has none.
 */
export async function checkedStatusCallback(
  rpc: AccountRpc,
  callback: { url: string; events?: string[] | undefined } | undefined,
  resourceKind: "call" | "message",
): Promise<webhook.StatusCallback | undefined> {
  if (callback === undefined) return undefined;
  const response = await rpc.webhook((c) => c.checkStatusCallback, {
    statusCallback: { url: callback.url, events: callback.events ?? [] },
    resourceKind,
  });
  return response.statusCallback;
}

/** What the operations that take a `status_callback` say about it. */
export const statusCallbackDescription = (kind: "call" | "message") =>
  `\`status_callback\` {url, events?}: this ${kind}'s events (all of them, or those \`events\` selects: \`${kind}.*\` or ${kind} event types) are also POSTed to url, as Standard Webhooks deliveries signed with the account's status-callback secret (GET /v1/api/webhooks/status-callback; Switchboard-Subscription-Id names its subscription, whose delivery log lists them: ?resource_id= for this ${kind}'s), with a subscription's retries. The url is checked like a subscription's (422 unsafe-webhook-url at #/status_callback/url); a 410 ends that delivery only.`;
