import { SPACE_KEY_PREFIX } from '../spaces/spaces.js';

/**
 * What a subject (the owner of memories) may be. Every token passes the verifier, and `token issue` signs
 * only what the verifier would accept, so the same rules hold for the built-in and external servers.
 *
 * - Well-formed Unicode: a lone surrogate has no UTF-8 form and would be stored as U+FFFD, so "\uD800x" and
 *   "\uDC00x" would become one owner.
 * - No control characters (U+0000 to U+001F, U+007F to U+009F): PostgreSQL text cannot hold U+0000, and no
 *   issuer names its users with the others.
 * - Not "*", which once meant "every subject" to row-level security and stays reserved.
 * - Not beginning with "space:": a subject is its personal space's key, and shared spaces' keys begin so.
 * - At most 255 bytes of UTF-8, the OpenID Connect limit for `sub`; the subject leads several B-tree keys.
 */
export const SUBJECT_LIMITS = { maxBytes: 255 } as const;

export const RESERVED_SUBJECT = '*';

const CONTROL = /\p{Cc}/u;

/** Why `subject` cannot own memories, naming the claim it came from; undefined when it can. */
export function subjectProblem(subject: string, claim = 'sub'): string | undefined {
  if (subject === '') return `"${claim}" claim is empty`;
  if (!subject.isWellFormed()) return `"${claim}" claim is not valid Unicode`;
  if (CONTROL.test(subject)) return `"${claim}" claim contains control characters`;
  if (subject === RESERVED_SUBJECT) return `"${claim}" claim "*" is reserved`;
  if (subject.startsWith(SPACE_KEY_PREFIX)) return `"${claim}" claim must not begin with "${SPACE_KEY_PREFIX}" (reserved for shared spaces)`;
  if (Buffer.byteLength(subject, 'utf8') > SUBJECT_LIMITS.maxBytes) {
    return `"${claim}" claim is longer than ${SUBJECT_LIMITS.maxBytes} bytes`;
  }
  return undefined;
}
