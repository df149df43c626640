import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from '../../src/db/pglite-timestamps.js';

describe('parseTimestamptz (PGlite reads timestamptz through it)', () => {
  it.each([
    ['0001-06-15 12:34:56.123456+00', '0001-06-15T12:34:56.123Z'],
    ['0099-12-31 23:59:59+00', '0099-12-31T23:59:59.000Z'],
    ['2024-06-15 12:34:56.5+02', '2024-06-15T10:34:56.500Z'],
    ['2024-06-15 12:34:56-05:30', '2024-06-15T18:04:56.000Z'],
    ['1900-01-01 00:00:00+00:53:28', '1899-12-31T23:06:32.000Z'],
    ['9999-12-31 23:59:59.999+00', '9999-12-31T23:59:59.999Z'],
    ['0044-03-15 12:00:00+00 BC', '-000043-03-15T12:00:00.000Z'],
  ])('reads %s as %s (years below 100 included)', (text, iso) => {
    expect(parseTimestamptz(text).toISOString()).toBe(iso);
  });

  it('gives an invalid date for text that is not a finite timestamp', () => {
    expect(Number.isNaN(parseTimestamptz('infinity').getTime())).toBe(true);
  });
});
