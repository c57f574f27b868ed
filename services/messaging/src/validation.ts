import type { FieldErrors } from "@switchboard/kit";
import { wire, type messaging, type WireEnum } from "@switchboard/proto";

export const channels = wire.channel.values;
export type Channel = wire.ChannelValue;
export const isChannel = wire.channel.is;

/**
 * A request's enum value as the API spells it, checked like the strings the rows hold: "" for
 * UNSPECIFIED and values this build does not know, which no check accepts.
 */
export const spelled = <V extends string, W extends string>(
  set: WireEnum<V, W>,
  value: NoInfer<V>,
): W | "" => set.spell(value) ?? "";

export const spellChannels = (values: readonly messaging.Channel[]): string[] =>
  values.map((value) => spelled(wire.channel, value));

/** A non-empty list of distinct channels; pushes errors under `pointer`. */
export function checkChannels(values: readonly string[], pointer: string, errors: FieldErrors) {
  const names = channels.join(", ");
  if (values.length === 0) errors.add(pointer, `must name at least one of ${names}`);
  values.forEach((value, index) => {
    if (!isChannel(value)) errors.add(`${pointer}/${index}`, `must be one of ${names}`);
    else if (values.indexOf(value) !== index) errors.add(`${pointer}/${index}`, "is repeated");
  });
}

/** Channels in their canonical order (sms, mms, rcs), so equal sets compare and sign equally. */
export const sortChannels = (values: readonly string[]): Channel[] =>
  channels.filter((channel) => values.includes(channel));

export const iso = (value: Date | null | undefined): string | undefined =>
  value ? value.toISOString() : undefined;
