import type { Account, ClientInfo, ServiceTokenInfo } from "../../admin/index.js";
import type { SigningKeyInfo } from "../../auth/index.js";

const iso = (date: Date | null) => (date ? date.toISOString() : null);
export const accountView = (a: Account) => ({
  id: a.id,
  name: a.name,
  created_at: iso(a.createdAt),
});
export const clientView = (c: ClientInfo) => ({
  client_id: c.clientId,
  account_id: c.accountId,
  name: c.name,
  scopes: c.scopes,
  created_at: iso(c.createdAt),
  disabled_at: iso(c.disabledAt),
});
export const tokenView = (t: ServiceTokenInfo) => ({
  id: t.id,
  account_id: t.accountId,
  name: t.name,
  display_hint: t.displayHint,
  scopes: t.scopes,
  expires_at: iso(t.expiresAt),
  revoked_at: iso(t.revokedAt),
  created_at: iso(t.createdAt),
});
export const keyView = (k: SigningKeyInfo) => ({
  kid: k.kid,
  purpose: k.purpose,
  alg: k.alg,
  status: k.status,
  created_at: iso(k.createdAt),
  retired_at: iso(k.retiredAt),
});
