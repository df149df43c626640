import { z } from 'zod';
import { normalizeTags, TAG_LIMITS } from '../memory/tags.js';

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

export const tagList = (description: string) =>
  z
    .array(z.string({ error: typeError('a string') }), { error: typeError('an array of strings') })
    .nullish()
    .transform((tags, context) => {
      if (tags === null || tags === undefined) return [];
      const result = normalizeTags(tags);
      if (!result.ok) {
        context.addIssue({ code: 'custom', message: result.message, input: tags });
        return z.NEVER;
      }
      return result.tags;
    })
    .meta({ description, maxItems: TAG_LIMITS.maxTags });

const ISO_WITH_ZONE = 'must be an ISO 8601 timestamp with a time zone, e.g. 2026-01-31T09:00:00Z';

export const timestamp = (description: string) =>
  z
    .iso.datetime({ offset: true, error: ISO_WITH_ZONE })
    .nullish()
    .transform((value) => (value === null || value === undefined ? undefined : new Date(value)))
    .meta({ description });

export const enumOf = <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
  z.enum(values, { error: `must be one of ${values.map((value) => `"${value}"`).join(', ')}` }).meta({ description });
