import { DomainError } from "@switchboard/kit";
import type { Scope } from "./scopes.js";

/** Who is calling: the verified identity behind a request. */
export interface Principal {
  accountId: string;
  /** The OAuth client id, or the service token's `tok_` id. */
  principalId: string;
  kind: "client" | "service_token";
  scopes: ReadonlySet<Scope>;
}

/** Throws 403 `insufficient-scope` unless the principal holds `scope`. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (principal.scopes.has(scope)) return;
  throw new DomainError("insufficient-scope", `this operation requires the scope ${scope}`, {
    extensions: { required_scope: scope },
  });
}
