/** The permissions of docs/api.md, in the order the contract lists them. Each route needs one. */
export const scopes = [
  "numbers:read",
  "numbers:write",
  "calls:read",
  "calls:write",
  "messages:read",
  "messages:write",
  "templates:write",
  "consents:write",
  "usage:read",
  "webhooks:read",
  "webhooks:write",
  "agent:smoke",
  "admin",
] as const;

export type Scope = (typeof scopes)[number];

const known: ReadonlySet<string> = new Set(scopes);

export const isScope = (value: string): value is Scope => known.has(value);

/** Every scope but `admin`: what a client or token gets when no scopes are named. */
export const defaultScopes: readonly Scope[] = scopes.filter((s) => s !== "admin");

/** Sorts and de-duplicates scopes into the contract's order (stable, readable output). */
export const canonicalScopes = (values: Iterable<Scope>): Scope[] => {
  const wanted = new Set(values);
  return scopes.filter((s) => wanted.has(s));
};

/** Splits an OAuth `scope` string (space-separated, RFC 6749 §3.3) into its tokens. */
export const splitScopeString = (value: string): string[] =>
  value.split(" ").filter((token) => token !== "");
