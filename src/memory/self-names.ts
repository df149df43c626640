import { STOP_WORDS } from './english.js';

/**
 * The names a subject's memories call the user by. Clients write about the user by name as often as by "I" or
 * "the user" ("Tomasz drives a red Skoda" / "I drive a grey Hyundai"); recall reads such a name as the user in the
 * question and when it weighs versions of a fact. A name is the user's when the memories say so ("My name is Tomasz", "The user's name is
 * Marcus Delgado"), or when one name is what they are about: the subject of a large share of them, never a relation
 * of the user's ("my brother Tomasz") and hardly ever beside the user in one text ("Tomasz and I"). A wrong guess
 * changes what recall searches for and how it orders versions of a fact, never a memory.
 */
export class NameTally {
  /** How many texts were read. */
  #texts = 0;
  /** Per name (lowercase), the texts that open with it or its possessive ("Tomasz drives", "Tomasz's GP"). */
  readonly #opening = new Map<string, number>();
  /** Per name, the texts that name it and also say "I", "my" or "the user". */
  readonly #besideUser = new Map<string, number>();
  /** Names said to be someone's ("my brother Tomasz", "Tomasz, the user's cousin"): never the user. */
  readonly #related = new Set<string>();
  /** Names the texts say are the user's. */
  readonly #stated = new Set<string>();

  add(text: string): void {
    this.#texts++;
    const plain = text.replace(/[’]/g, "'");
    for (const match of plain.matchAll(STATED_NAME)) for (const name of match.slice(1)) if (name !== undefined && isName(name)) this.#stated.add(name.toLowerCase());
    for (const match of plain.matchAll(RELATED_BEFORE)) if (isRole(match[1]!)) this.#related.add(match[2]!.toLowerCase());
    for (const match of plain.matchAll(RELATED_AFTER)) if (isRole(match[2]!)) this.#related.add(match[1]!.toLowerCase());
    const opening = OPENING_NAME.exec(plain)?.[1];
    if (opening !== undefined && isName(opening)) {
      const name = opening.toLowerCase();
      this.#opening.set(name, (this.#opening.get(name) ?? 0) + 1);
      if (SAYS_USER.test(plain.slice(opening.length))) this.#besideUser.set(name, (this.#besideUser.get(name) ?? 0) + 1);
    }
  }

  /** The names (lowercase) read as the user's: those stated, and the one the texts are about, if any. */
  names(): string[] {
    const names = new Set(this.#stated);
    const [first, second] = [...this.#opening].filter(([name]) => !this.#related.has(name)).sort((a, b) => b[1] - a[1]);
    if (first !== undefined) {
      const [name, count] = first;
      const about = count >= Math.max(MIN_OPENING, SHARE_OF_TEXTS * this.#texts) && count >= LEAD_OVER_NEXT * (second?.[1] ?? 0);
      if (about && (this.#besideUser.get(name) ?? 0) <= BESIDE_USER_SHARE * count) names.add(name);
    }
    for (const name of this.#related) names.delete(name);
    return [...names];
  }
}

/** At least this many texts, and this share of all, open with the name… */
const MIN_OPENING = 5;
const SHARE_OF_TEXTS = 0.1;
/** …at least this many times as many as open with any other name… */
const LEAD_OVER_NEXT = 2;
/** …and at most this share of them also say "I", "my" or "the user". */
const BESIDE_USER_SHARE = 0.1;

const NAME = String.raw`(\p{Lu}\p{Ll}+(?:-\p{Lu}?\p{Ll}+)?)`;
/** "My name is Tomasz Nowak", "The user's name is Marcus", "I'm called Tom", "call me Tom", "Name: Noor". */
const STATED_NAME = new RegExp(
  String.raw`(?:\b(?:[Mm]y|[Tt]he user's|[Uu]ser's) (?:first |full )?name is|\b(?:I'm|I am|[Tt]he user is) called|\b[Cc]all me|^[Nn]ame:)\s+${NAME}(?:\s+${NAME})?`,
  'gu',
);
/** A role of someone's right before a name: "my brother Tomasz", "the user's line manager Ailsa". */
const RELATED_BEFORE = new RegExp(String.raw`\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|user's|\p{Lu}\p{Ll}+'s)((?: [\p{Ll}-]+){1,2}),? ${NAME}`, 'gu');
/** Words that name a role ("brother", "line manager"), not a statement ("name is"). */
const isRole = (words: string): boolean => words.trim().split(' ').every((word) => !STOP_WORDS.has(word) && word !== 'name');
/** A name followed by whose it is: "Tomasz, my brother", "Ailsa (the user's manager)", "Theo is my son". */
const RELATED_AFTER = new RegExp(String.raw`${NAME},? (?:\(|is |was )?(?:my|our|his|her|their|the user's) ([\p{Ll}-]+)`, 'gu');
const OPENING_NAME = new RegExp(String.raw`^\s*${NAME}(?:'s)?\b`, 'u');
const SAYS_USER = /\b(?:I|I'm|I've|I'd|me|my|mine|myself)\b|\b[Tt]he user\b/;

const isName = (word: string): boolean => !STOP_WORDS.has(word.toLowerCase()) && !NOT_NAMES.has(word.toLowerCase());
/** Capitalised words that open a text without naming anyone. */
const NOT_NAMES = new Set(['user', 'home', 'work', 'every', 'each', 'since', 'until', 'last', 'next', 'today', 'tomorrow', 'yesterday', 'note', 'reminder']);

/**
 * `text` with each of `names` (lowercase, or capitalised as written) written as the user: "Tomasz's GP" → "the
 * user's GP", "Tomasz drives" → "the user drives". `text` itself when there are none.
 */
export function namingUser(text: string, names: readonly string[]): string {
  if (names.length === 0) return text;
  // Capitalised only: "Robin" is the user, "a robin" is not.
  const capitalised = names.map((name) => escaped(name.charAt(0).toUpperCase() + name.slice(1)));
  const pattern = new RegExp(String.raw`(?<![\p{L}\p{N}])(?:${capitalised.join('|')})(?![\p{L}\p{N}])`, 'gu');
  return text.replace(pattern, 'the user');
}

const escaped = (word: string): string => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How many of a space's latest memories its names are read from, and how much of each. */
export const NAME_TEXTS = 500;
export const NAME_TEXT_CHARS = 300;
/** How long a space's names are kept before its memories are read again (other processes write too). */
const NAMES_KEPT_MS = 10 * 60_000;
/** At most this many spaces' tallies are kept (past it the oldest goes). */
const SPACES_KEPT = 10_000;

/**
 * Each space's names, read from its latest memories when first asked for (recall reads them with its rankings: no
 * round trip of their own), then kept up to date with the texts this process stores in it, and read again after
 * NAMES_KEPT_MS.
 */
export class SelfNames {
  readonly #tallies = new Map<string, { readonly tally: NameTally; readonly readAt: number }>();

  /** The names `space`'s memories call the user by, as last read; undefined when its texts were never read. */
  known(space: string): string[] | undefined {
    return this.#tallies.get(space)?.tally.names();
  }

  /** Whether `space`'s latest texts are to be read: never read, or not for NAMES_KEPT_MS. */
  due(space: string): boolean {
    const kept = this.#tallies.get(space);
    return kept === undefined || Date.now() - kept.readAt >= NAMES_KEPT_MS;
  }

  /** `space`'s names, from its latest texts (NAME_TEXTS of them, NAME_TEXT_CHARS of each), kept from now on. */
  read(space: string, latest: readonly string[]): string[] {
    const tally = new NameTally();
    for (const text of latest) tally.add(text);
    this.#tallies.delete(space);
    if (this.#tallies.size >= SPACES_KEPT) this.#tallies.delete(this.#tallies.keys().next().value!);
    this.#tallies.set(space, { tally, readAt: Date.now() });
    return tally.names();
  }

  /** Drops what was read of `space` (its memories are being erased). */
  forget(space: string): void {
    this.#tallies.delete(space);
  }

  /** A text stored in `space` (a memory or a restatement) counts at once where the space's names are kept. */
  stored(space: string, text: string): void {
    this.#tallies.get(space)?.tally.add(text);
  }
}
