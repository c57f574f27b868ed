import { validationFailed, type FieldError } from "@switchboard/kit";

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

export const channels = ["sms", "mms", "rcs"] as const;
export type Channel = (typeof channels)[number];
export const isChannel = (value: string): value is Channel =>
  (channels as readonly string[]).includes(value);

/** Every request names the account it acts for (filled by the gateway). */
export function requireAccount(accountId: string, errors = new FieldErrors()): FieldErrors {
  if (accountId.trim() === "" || accountId.length > 255) {
    errors.add("#/account_id", "must name the account");
  }
  return errors;
}

/** A non-empty list of distinct channels; pushes errors under `pointer`. */
export function checkChannels(values: readonly string[], pointer: string, errors: FieldErrors) {
  if (values.length === 0) errors.add(pointer, "must name at least one of sms, mms, rcs");
  values.forEach((value, index) => {
    if (!isChannel(value)) errors.add(`${pointer}/${index}`, "must be one of sms, mms, rcs");
    else if (values.indexOf(value) !== index) errors.add(`${pointer}/${index}`, "is repeated");
  });
}

/** Channels in their canonical order (sms, mms, rcs), so equal sets compare and sign equally. */
export const sortChannels = (values: readonly string[]): Channel[] =>
  channels.filter((channel) => values.includes(channel));

export const iso = (value: Date | null | undefined): string | undefined =>
  value ? value.toISOString() : undefined;
