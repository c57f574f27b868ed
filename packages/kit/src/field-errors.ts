import { notFound, validationFailed, type FieldError } from "./errors.js";
import { isId, type IdPrefix } from "./ids.js";

/** Collects field errors and throws one `validation-failed` carrying all of them. */
export class FieldErrors {
  readonly errors: FieldError[] = [];

  add(pointer: string, detail: string): this {
    this.errors.push({ pointer, detail });
    return this;
  }

  get empty(): boolean {
    return this.errors.length === 0;
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw validationFailed(this.errors);
  }

  /** Throws validation-failed with every error so far. */
  fail(): never {
    throw validationFailed(this.errors);
  }
}

export const e164Pattern = /^\+[1-9][0-9]{1,14}$/;

/** Every request names the account it acts for (filled by the gateway). */
export function requireAccount(accountId: string, errors = new FieldErrors()): FieldErrors {
  if (accountId.trim() === "" || accountId.length > 255) {
    errors.add("#/account_id", "must name the account");
  }
  return errors;
}

export function checkE164(errors: FieldErrors, pointer: string, value: string): void {
  if (!e164Pattern.test(value)) errors.add(pointer, "must be an E.164 number such as +14155550100");
}

export function checkIntRange(
  errors: FieldErrors,
  pointer: string,
  value: number | undefined,
  min: number,
  max: number,
): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    errors.add(pointer, `must be an integer from ${min} to ${max}`);
  }
}

/** A path id that cannot name a resource of its kind is simply not found. */
export function requireId(value: string, prefix: IdPrefix, what: string): string {
  if (!isId(value, prefix)) throw notFound(what);
  return value;
}
