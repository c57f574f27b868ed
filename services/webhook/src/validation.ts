import { validationFailed, type FieldError } from "@switchboard/kit";

/** Collects field errors and throws one `validation-failed` carrying all of them. */
export class FieldErrors {
  readonly errors: FieldError[] = [];

  add(pointer: string, detail: string): this {
    this.errors.push({ pointer, detail });
    return this;
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw validationFailed(this.errors);
  }
}

/** Every request names the account it acts for (filled by the gateway). */
export function requireAccount(accountId: string, errors = new FieldErrors()): FieldErrors {
  if (accountId.trim() === "" || accountId.length > 255) {
    errors.add("#/account_id", "must name the account");
  }
  return errors;
}
