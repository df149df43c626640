import { z } from 'zod';
import { normalizeTags, TAG_LIMITS, type TagProblem } from '../memory/tags.js';

/** Building blocks shared by the tools' argument schemas. Optional arguments also accept null (= absent). */

export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const typeError = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

export const requiredText = (maxChars: number, description: string) =>
  z
    .string({ error: typeError('a string') })
    .refine((text) => text.trim() !== '', 'must not be blank')
    .refine((text) => countCharacters(text) <= maxChars, `must be at most ${maxChars} characters`)
    .meta({ description, maxLength: maxChars });

export const optionalString = (maxChars: number, description: string) =>
  z
    .string({ error: typeError('a string') })
    .trim()
    .min(1, 'must not be empty')
    .refine((value) => countCharacters(value) <= maxChars, `must be at most ${maxChars} characters`)
    .nullish()
    .transform((value) => value ?? undefined)
    .meta({ description, maxLength: maxChars });

/** Normalised tags; absent or null gives []. */
export const tagList = (description: string) => optionalTagList(description).transform((tags) => tags ?? []);

/** Normalised tags; absent or null stays undefined (so a caller can tell "no change" from "none"). */
export const optionalTagList = (description: string) =>
  z
    .array(z.string({ error: typeError('a string') }), { error: typeError('an array of strings') })
    .nullish()
    .transform((tags, context) => {
      if (tags === null || tags === undefined) return undefined;
      const result = normalizeTags(tags);
      if (!result.ok) {
        context.addIssue({ code: 'custom', message: describeTagProblem(result), input: tags });
        return z.NEVER;
      }
      return result.tags;
    })
    .meta({ description, maxItems: TAG_LIMITS.maxTags });

/** Names the argument: "tags[1] is empty after normalisation". */
export function describeTagProblem(problem: TagProblem): string {
  switch (problem.problem) {
    case 'too_many':
      return `tags has ${problem.count} items; at most ${TAG_LIMITS.maxTags} are allowed`;
    case 'empty':
      return `tags[${problem.index}] is empty after normalisation`;
    case 'too_long':
      return `tags[${problem.index}] is longer than ${TAG_LIMITS.maxTagChars} characters after normalisation`;
  }
}

const ISO_WITH_ZONE = 'must be an ISO 8601 timestamp with a time zone, e.g. 2026-01-31T09:00:00Z';

export const timestamp = (description: string) =>
  z
    .iso.datetime({ offset: true, error: ISO_WITH_ZONE })
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
