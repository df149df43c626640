/**
 * PGlite reads a timestamptz with `new Date(text)`, and V8's legacy date parser takes years below 100 for
 * 19xx or 20xx: "0001-06-15 12:34:56+00" comes back as 2015-01-06. node-postgres parses the fields instead;
 * so does this, so both engines read back what they stored.
 */
const ISO_OUTPUT = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?( BC)?$/;

/** PostgreSQL's ISO text of a timestamptz ("2024-06-15 12:34:56.123456+02", "0044-03-15 12:00:00+00 BC"). */
export function parseTimestamptz(text: string): Date {
  const match = ISO_OUTPUT.exec(text);
  if (match === null) return new Date(Number.NaN);
  const [, year, month, day, hour, minute, second, fraction = '0', sign, offsetHours, offsetMinutes = '0', offsetSeconds = '0', bc] = match;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0 to 99 as they are.
  date.setUTCFullYear(bc === undefined ? Number(year) : 1 - Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), Math.floor(Number(fraction.padEnd(6, '0')) / 1000));
  const offset = (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offset : offset));
}

/** PGlite's `parsers` option: timestamptz (oid 1184). */
export const PGLITE_PARSERS = { 1184: parseTimestamptz } as const;
