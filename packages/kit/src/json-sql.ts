/**
 * SQL expressions that write a value into JSON the way the services' JavaScript does, for an
 * event whose data is built in the statement of its state change (appendEventCtes).
 */

/**
 * A timestamptz as `Date.prototype.toISOString` writes the Date pg reads from it: UTC,
 * milliseconds (truncated, as pg's parser truncates the microseconds), `Z`; NULL stays NULL.
 */
export const isoTimestampSql = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A timestamptz as `Date.prototype.getTime()` of the Date pg reads from it (whole ms). */
export const epochMillisecondsSql = (column: string): string =>
  `floor(extract(epoch FROM ${column}) * 1000)`;
