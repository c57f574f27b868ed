import type { FieldErrors } from "@switchboard/kit";

export const channels = ["sms", "mms", "rcs"] as const;
export type Channel = (typeof channels)[number];
export const isChannel = (value: string): value is Channel =>
  (channels as readonly string[]).includes(value);

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
