import { z } from 'zod';
import { canonicalTags, describeTagProblem, normalizeTags, TAG_LIMITS } from '../memory/tags.js';

/**
 * Building blocks shared by the tools' argument schemas. Optional arguments also accept null (= absent):
 * strict function calling (OpenAI) makes every argument required and sends null for the ones the model
 * leaves out. Their limits (maxLength, maxItems) sit on the inner type, so the published schema carries them
 * inside the non-null branch of its anyOf, where strict-mode conversion accepts them; the description sits on
 * the property.
 */

export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const typeError = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

/**
 * The base of every string argument. PostgreSQL text cannot hold U+0000 (the driver would fail and the
 * caller would see DATABASE_ERROR), and a lone UTF-16 surrogate has no UTF-8 form (it would be stored as
 * U+FFFD, so two different strings would become one): both are refused here, naming the argument.
 */
export const cleanString = (expected = 'a string') =>
  z
    .string({ error: typeError(expected) })
    .refine((value) => !value.includes('\u0000'), { message: 'must not contain U+0000 (NUL)', abort: true })
    .refine((value) => value.isWellFormed(), { message: 'is not valid Unicode (lone surrogate)', abort: true });

export const requiredText = (maxChars: number, description: string) =>
  cleanString()
    .refine((text) => text.trim() !== '', 'must not be blank')
    .refine((text) => countCharacters(text) <= maxChars, `must be at most ${maxChars} characters`)
    .meta({ description, maxLength: maxChars });

export const optionalString = (maxChars: number, description: string) =>
  cleanString()
    .trim()
    .min(1, 'must not be empty')
    .refine((value) => countCharacters(value) <= maxChars, `must be at most ${maxChars} characters`)
    .meta({ maxLength: maxChars })
    .nullish()
    .transform((value) => value ?? undefined)
    .meta({ description });

/** Longest space name or id a tool takes (names are at most 80 characters, ids fewer). */
export const SPACE_SELECTOR_CHARS = 200;
/** Most spaces one recall searches. */
export const MAX_RECALL_SPACES = 10;

/** One space, by id (`personal`, `space:…`) or name; absent: the personal space. */
export const spaceArgument = (description: string) => optionalString(SPACE_SELECTOR_CHARS, description);

/** Several spaces (or one), by id or name; absent: the personal space. */
export const spacesArgument = (description: string) =>
  z
    .union([
      cleanString().trim().min(1, 'must not be empty').max(SPACE_SELECTOR_CHARS, `must be at most ${SPACE_SELECTOR_CHARS} characters`),
      z
        .array(cleanString().trim().min(1, 'must not be empty').max(SPACE_SELECTOR_CHARS, `must be at most ${SPACE_SELECTOR_CHARS} characters`))
        .min(1, 'must name at least one space')
        .max(MAX_RECALL_SPACES, `must name at most ${MAX_RECALL_SPACES} spaces`),
    ])
    .nullish()
    .transform((value) => (value === null || value === undefined ? undefined : typeof value === 'string' ? [value] : value))
    .meta({ description });

/** Filter tags, normalised here (they are compared, never stored; already checked, so canonicalTags cannot refuse them); absent or null gives []. */
export const tagList = (description: string) =>
  optionalGivenTagList(description).transform((tags) => (tags === undefined ? [] : canonicalTags(tags)));

/**
 * Tags to store, as given (checked here so a bad list is refused before any work); absent or null gives []. The
 * memory service checks them for secrets before it normalises them (lowercasing and `_` → `-` would hide a key's
 * shape from the detector).
 */
export const givenTagList = (description: string) => optionalGivenTagList(description).transform((tags) => tags ?? []);

/** Tags to store, as given; absent or null stays undefined (so a caller can tell "no change" from "none"). */
export const optionalGivenTagList = (description: string) =>
  z
    .array(cleanString(), { error: typeError('an array of strings') })
    .meta({ maxItems: TAG_LIMITS.maxTags })
    .nullish()
    .transform((tags, context) => {
      if (tags === null || tags === undefined) return undefined;
      const result = normalizeTags(tags);
      if (!result.ok) {
        context.addIssue({ code: 'custom', message: describeTagProblem(result), input: tags });
        return z.NEVER;
      }
      return tags;
    })
    .meta({ description });

const ISO_WITH_ZONE = 'must be an ISO 8601 timestamp with a time zone, e.g. 2026-01-31T09:00:00Z';

/**
 * The instants both engines store alike: years 0001 to 9999 in UTC. Outside it they part ways (node-postgres
 * sends year 0 as "0001 BC", which PostgreSQL stores; PGlite sends "0000-…", which it refuses; year 10000
 * comes back as "+010000-…"), so a timestamp is checked after its offset is applied.
 */
export const TIMESTAMP_RANGE = { min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z') } as const;
const OUT_OF_RANGE = 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z once its offset is applied';

export const timestamp = (description: string) =>
  z
    .iso.datetime({ offset: true, error: ISO_WITH_ZONE })
    .refine((value) => {
      const time = new Date(value).getTime();
      // NaN: not a timestamp at all, which the format check above reports.
      return Number.isNaN(time) || (time >= TIMESTAMP_RANGE.min.getTime() && time <= TIMESTAMP_RANGE.max.getTime());
    }, OUT_OF_RANGE)
    .nullish()
    .transform((value) => (value === null || value === undefined ? undefined : new Date(value)))
    .meta({ description });

/** An optional enum; absent or null gives `fallback`. The description sits on the property itself, not inside anyOf. */
export const optionalEnum = <const T extends readonly [string, ...string[]], F extends T[number] | undefined>(values: T, description: string, fallback: F) =>
  z
    .enum(values, { error: `must be one of ${values.map((value) => `"${value}"`).join(', ')}` })
    .nullish()
    .transform((value): T[number] | F => value ?? fallback)
    .meta({ description });

/** 0 to 1; absent or null gives undefined. */
export const importance = (description: string) =>
  z
    .number({ error: 'must be a number from 0 to 1' })
    .min(0, 'must be from 0 to 1')
    .max(1, 'must be from 0 to 1')
    .nullish()
    .transform((value) => value ?? undefined)
    .meta({ description });

/** A memory_id as remember, recall and list_memories return it. */
export const memoryId = (description: string) =>
  z
    .number({ error: typeError('an integer') })
    .int({ error: 'must be an integer' })
    .min(1, 'must be a positive integer')
    .max(Number.MAX_SAFE_INTEGER, 'is not a memory_id')
    .meta({ description });

/** An integer from `min` to `max`; absent or null gives `fallback`. */
export const boundedInteger = (min: number, max: number, fallback: number, description: string) =>
  z
    .number({ error: `must be an integer from ${min} to ${max}` })
    .int({ error: `must be an integer from ${min} to ${max}` })
    .min(min, `must be an integer from ${min} to ${max}`)
    .max(max, `must be an integer from ${min} to ${max}`)
    .nullish()
    .transform((value) => value ?? fallback)
    .meta({ description, default: fallback });
