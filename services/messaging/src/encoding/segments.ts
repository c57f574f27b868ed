import type { wire } from "@switchboard/proto";
import { gsm7Septets, isGsm7 } from "./gsm7.js";

export type Encoding = wire.EncodingValue;

export interface SegmentInfo {
  encoding: Encoding;
  segments: number;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) the whole text takes. */
  units: number;
}

/**
 * Limits per encoding: a single segment carries 160 septets or 70 UCS-2 code units; once a
 * message is concatenated each segment loses 7 septets / 3 code units to the 6-octet UDH.
 */
export const segmentLimits = {
  "GSM-7": { single: 160, multi: 153 },
  "UCS-2": { single: 70, multi: 67 },
} as const;

/**
 * The encoding and segment count an SMS carrier uses for `text`, computed exactly: one
 * character outside GSM-7 switches the whole message to UCS-2; GSM-7 extension characters
 * (ESC + septet) and UTF-16 surrogate pairs (emoji) are never split across two segments, so a
 * segment may carry one unit less than the limit.
 */
export function segmentText(text: string): SegmentInfo {
  const encoding: Encoding = isGsm7(text) ? "GSM-7" : "UCS-2";
  const widths = [...text].map((character) =>
    encoding === "GSM-7" ? (gsm7Septets(character) ?? 1) : character.length,
  );
  const units = widths.reduce((sum, width) => sum + width, 0);
  const limits = segmentLimits[encoding];
  if (units <= limits.single) return { encoding, segments: 1, units };
  let segments = 1;
  let used = 0;
  for (const width of widths) {
    if (used + width > limits.multi) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return { encoding, segments, units };
}

/** Characters as users count them: Unicode code points (an emoji is one). */
export const characterCount = (text: string): number => [...text].length;

/**
 * What one message counts on its channel: an SMS is billed and sent per segment; an MMS and an
 * RCS message travel whole, as one. The encoding is the text's either way.
 */
export function messageSegments(
  channel: string,
  text: string,
): { encoding: Encoding; segments: number } {
  const info = segmentText(text);
  return { encoding: info.encoding, segments: channel === "sms" ? info.segments : 1 };
}
