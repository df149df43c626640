/**
 * Tag normalisation.
 *
 * Every tag is normalised to a canonical form, in this order:
 *
 *   1. Unicode NFKC normalisation (full-width "ＡＢＣ" becomes "ABC", the ligature "ﬁ" becomes "fi").
 *   2. Lowercasing with String.prototype.toLowerCase() (locale-independent).
 *   3. Leading and trailing whitespace is trimmed.
 *   4. A single leading "#" is dropped, and the rest is trimmed again ("#Work" and "# work" become
 *      "work"; "##work" becomes "#work").
 *   5. Every run of whitespace and underscores, together with any hyphens adjacent to it,
 *      becomes a single hyphen ("project_alpha  beta" and "a _-_ b" become "project-alpha-beta" and
 *      "a-b"). A run made only of hyphens is kept as it is ("a--b" stays "a--b").
 *   6. Leading and trailing hyphens are removed ("-work-" becomes "work").
 *
 * All other characters (letters of any script, digits, punctuation, emoji) are kept.
 *
 * A list of tags is then checked and de-duplicated:
 *
 *   - at most TAG_LIMITS.maxTags (20) items may be given, counted before de-duplication;
 *   - a tag that is empty after normalisation is an error;
 *   - a tag longer than TAG_LIMITS.maxTagChars (64) characters after normalisation is an error,
 *     counting Unicode code points (so one emoji counts as one character);
 *   - tags that normalise to the same form are kept once, in order of first occurrence
 *     (["Work", "work", "#work"] becomes ["work"]).
 */

import { invalidInput } from '../errors.js';
import { codePointLength } from './budget.js';

export const TAG_LIMITS = { maxTags: 20, maxTagChars: 64 } as const;

/** A refused list: too many items (counted before de-duplication), or the item at `index` empty or too long. */
export type TagProblem =
  | { readonly problem: 'too_many'; readonly count: number }
  | { readonly problem: 'empty' | 'too_long'; readonly index: number };

export type TagResult = { readonly ok: true; readonly tags: string[] } | ({ readonly ok: false } & TagProblem);

/** Runs of hyphens, whitespace and underscores; each run is handled as a whole (linear time). */
const SEPARATOR_RUN = /[-\s_]+/gu;
const HAS_SPACE_OR_UNDERSCORE = /[\s_]/u;

/** The canonical form of one tag (see the module comment); may be the empty string. */
export function normalizeTag(tag: string): string {
  let out = tag.normalize('NFKC').toLowerCase().trim();
  if (out.startsWith('#')) out = out.slice(1).trim();
  out = out.replace(SEPARATOR_RUN, (run) => (HAS_SPACE_OR_UNDERSCORE.test(run) ? '-' : run));
  let start = 0;
  let end = out.length;
  while (start < end && out[start] === '-') start++;
  while (end > start && out[end - 1] === '-') end--;
  return out.slice(start, end);
}

/** Normalises, validates and de-duplicates a list of tags; the first problem found refuses the list. */
export function normalizeTags(input: readonly string[]): TagResult {
  if (input.length > TAG_LIMITS.maxTags) {
    return { ok: false, problem: 'too_many', count: input.length };
  }
  const seen = new Set<string>();
  const tags: string[] = [];
  for (let i = 0; i < input.length; i++) {
    const tag = normalizeTag(input[i] ?? '');
    if (tag === '') {
      return { ok: false, problem: 'empty', index: i };
    }
    if (codePointLength(tag) > TAG_LIMITS.maxTagChars) {
      return { ok: false, problem: 'too_long', index: i };
    }
    if (!seen.has(tag)) {
      seen.add(tag);
      tags.push(tag);
    }
  }
  return { ok: true, tags };
}

/** The canonical tags to store; INVALID_INPUT (naming the tag) when normalizeTags refuses the list. */
/** Names the list and item: "tags[1] is empty after normalisation". */
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

/** The canonical tags of a list to store; INVALID_INPUT naming the item when the list cannot be stored. */
export function canonicalTags(input: readonly string[]): string[] {
  const result = normalizeTags(input);
  if (!result.ok) throw invalidInput(describeTagProblem(result));
  return result.tags;
}
