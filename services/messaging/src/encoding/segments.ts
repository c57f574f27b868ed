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
 * The characters each segment of `text` carries, exactly as an SMS carrier splits it: one
 * character outside GSM-7 switches the whole message to UCS-2; GSM-7 extension characters
 * (ESC + septet) and UTF-16 surrogate pairs (emoji) are never split across two segments, so a
 * segment may carry one unit less than the limit. The counts the API reports and the parts the
 * SMPP carrier sends both come from here.
 */
export function splitSegments(text: string): {
  encoding: Encoding;
  parts: string[];
  units: number;
} {
  const encoding: Encoding = isGsm7(text) ? "GSM-7" : "UCS-2";
  const characters = [...text];
  const widths = characters.map((character) =>
    encoding === "GSM-7" ? (gsm7Septets(character) ?? 1) : character.length,
  );
  const units = widths.reduce((sum, width) => sum + width, 0);
  const limits = segmentLimits[encoding];
  if (units <= limits.single) return { encoding, parts: [text], units };
  const parts: string[] = [];
  let part = "";
  let used = 0;
  characters.forEach((character, index) => {
    const width = widths[index]!;
    if (used + width > limits.multi) {
      parts.push(part);
      part = "";
      used = 0;
    }
    part += character;
    used += width;
  });
  parts.push(part);
  return { encoding, parts, units };
}

/** The encoding and segment count an SMS carrier uses for `text` (see `splitSegments`). */
export function segmentText(text: string): SegmentInfo {
  const { encoding, parts, units } = splitSegments(text);
  return { encoding, segments: parts.length, units };
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
