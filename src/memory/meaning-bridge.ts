import { meaningsOf } from './wordnet.js';

/**
 * Meaning bridges for recall (README, "Words the memories never use"): a question may ask by a word that none of
 * the subject's memories uses ("Which herb …?", "Which antidepressant …?", "What vehicle …?") while the fact names a
 * kind of it or another word for it ("coriander", "sertraline", "car"), which neither the full-text ranking nor,
 * often, the local model connects. WordNet does: within each word's two most frequent
 * senses (rarer ones make almost any two words related), a text bridges an asked word when one of its words
 * - shares a noun sense with it (a synonym: "GP" for "physician"),
 * - or is a noun whose more general senses, up to KIND_DEPTH levels up, include it (a kind of it: "coriander" is a
 *   herb, "sertraline" an antidepressant).
 * Verbs are not bridged: everyday verbs ("got", "feel", "thinking") share a sense with too many questions' verbs
 * ("receive", "considered"), or are one level more general than them ("expresses" for "say"), which in long
 * conversational texts bridged nearly anything.
 */
const SENSES = 2;
const KIND_DEPTH = 3;

/** The words that WordNet knows, of those given. */
export function dictionaryWords(words: readonly string[]): string[] {
  return words.filter((word) => meaningsOf(word, { senses: SENSES, hypernymDepth: 0 }).senses.size > 0);
}

/** For each of `texts` (as sets of their words), whether it bridges one of the `asked` words by meaning. */
export function bridgedByMeaning(asked: readonly string[], texts: readonly ReadonlySet<string>[]): boolean[] {
  const nouns = new Set(asked.flatMap((word) => [...meaningsOf(word, { senses: SENSES, hypernymDepth: 0 }).senses].filter(isNoun)));
  const bridges = (word: string): boolean => {
    const meanings = meaningsOf(word, { senses: SENSES, hypernymDepth: KIND_DEPTH });
    return [...meanings.senses].some((sense) => nouns.has(sense)) || [...meanings.broader].some((sense) => nouns.has(sense));
  };
  return texts.map((words) => [...words].some(bridges));
}

// meaningsOf names a synset by its part of speech and offset ("noun:123").
const isNoun = (sense: string): boolean => sense.startsWith('noun:');
