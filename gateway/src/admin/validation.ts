import { validationFailed, type FieldError } from "@switchboard/kit";
import { canonicalScopes, isScope, type Scope } from "../auth/scopes.js";

/** Input checks shared by the admin operations; failures are 422 `validation-failed`. */
export const accountIdPattern = /^acct_[a-z0-9][a-z0-9_-]{0,63}$/;

/** RFC 6749 client_id: visible ASCII, no spaces; 1–255 characters. */
export const clientIdPattern = /^[!-~]{1,255}$/;

export const MIN_CLIENT_SECRET_LENGTH = 16;
export const MAX_CLIENT_SECRET_LENGTH = 512;
export const MAX_TOKEN_LIFETIME_SECONDS = 5 * 365 * 24 * 3600;

/** Collects field errors and throws them together. */
export class Checks {
  private readonly errors: FieldError[] = [];

  check(ok: boolean, pointer: string, detail: string): this {
    if (!ok) this.errors.push({ pointer, detail });
    return this;
  }

  done(): void {
    if (this.errors.length > 0) throw validationFailed(this.errors);
  }
}

const hasControlCharacter = (value: string): boolean =>
  [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export function checkName(checks: Checks, name: string | undefined, pointer: string, min = 0) {
  const value = name ?? "";
  checks.check(
    value.length >= min && value.length <= 200 && !hasControlCharacter(value),
    pointer,
    min > 0 ? "must be 1 to 200 printable characters" : "must be at most 200 printable characters",
  );
}

/** Validates scope names; unknown ones are reported by name. Returns them in canonical order. */
export function checkScopes(
  checks: Checks,
  values: readonly string[],
  pointer: string,
  options: { allowEmpty?: boolean } = {},
): Scope[] {
  const unknown = values.filter((v) => !isScope(v));
  checks.check(unknown.length === 0, pointer, `unknown scope ${unknown.join(", ")}`);
  checks.check(
    options.allowEmpty === true || values.length > 0,
    pointer,
    "name at least one scope",
  );
  return canonicalScopes(values.filter(isScope));
}

/**
 * `admin` is held only within the platform's own account (docs/api.md "Administration"): the
 * one rule the API (422) and the CLI (exit 1) apply to a new client's or service token's scopes.
 */
export function checkAdminGrant(
  checks: Checks,
  grant: { accountId: string; scopes: readonly string[] | undefined; adminAccount: string },
  pointer = "#/scopes",
): void {
  checks.check(
    grant.accountId === grant.adminAccount || !(grant.scopes ?? []).includes("admin"),
    pointer,
    "admin is granted only within the platform's account",
  );
}

/** Splits a CLI or form scope list on spaces or commas. */
export const splitScopeList = (value: string): string[] =>
  value.split(/[\s,]+/).filter((s) => s !== "");

interface PgError {
  code?: string;
}

export const isUniqueViolation = (error: unknown): boolean =>
  (error as PgError | null)?.code === "23505";

export const isForeignKeyViolation = (error: unknown): boolean =>
  (error as PgError | null)?.code === "23503";
