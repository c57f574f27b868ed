import { DomainError } from "@switchboard/kit";
import { allowListMatches } from "./url-guard.js";

/**
 * The ports deliveries may leave on (WEBHOOK_ALLOWED_PORTS). The Helm chart sets it from the
 * same list its NetworkPolicy opens to the internet (`networkPolicy.internetEgress.ports`), so a
 * subscription whose every delivery would time out at the firewall is refused when it is
 * created instead. Hosts in WEBHOOK_ALLOW_PRIVATE_HOSTS are exempt: their own egress rule opens
 * them. Empty (outside the chart): any port.
 */
export interface DeliveryPortRules {
  allowedPorts: readonly number[];
  allowPrivateHosts: readonly string[];
}

/** The TCP port a URL connects to. */
export const portOf = (url: URL): number =>
  Number(url.port || (url.protocol === "http:" ? 80 : 443));

/** Refuses a target on a port deliveries cannot leave on: 422 unsafe-webhook-url on #/url. */
export function checkDeliveryPort(url: URL, rules: DeliveryPortRules, pointer = "#/url"): void {
  if (rules.allowedPorts.length === 0) return;
  if (rules.allowPrivateHosts.some((entry) => allowListMatches(entry, url))) return;
  const port = portOf(url);
  if (rules.allowedPorts.includes(port)) return;
  const allowed = rules.allowedPorts.join(", ");
  const detail = `port ${port} is not allowed: webhooks are delivered to port ${allowed} only`;
  throw new DomainError("unsafe-webhook-url", detail, {
    errors: [{ pointer, detail }],
    extensions: { allowedPorts: [...rules.allowedPorts] },
  });
}
