import { SMALL_NUMBERS, STOP_WORDS } from './english.js';
import { comparerOf } from './same-fact.js';

/**
 * Coverage in recall: a result that says again what a better one already said ("Ivy is allergic to eggs." /
 * "Ivy has an egg allergy.", a fact told twice) takes a place that a question needing two facts needs
 * for the second. Among the first results, such near-copies move below the others of the window, in their order:
 * still returned, never lost, only after the results that add something.
 *
 * Texts of one sentence (facts) are copies when remember would take one for a restatement of the other (same-fact.ts,
 * given their similarity): alike in meaning is not enough, since "allergic to penicillin and amoxicillin" is as alike
 * to "allergic to penicillin since 2019" as a fact told twice, and says something new. The vector of several sentences (a
 * conversation's turn, a note) averages them, and two turns in one voice measure as alike as a fact told twice
 * while each says something the other does not ("The kids loved it! They made this!" / "I took my kids to a
 * pottery workshop. We all made pots."). When either says several, a copy must say no word the better one does not.
 */

/** How many of the first results are compared. */
export const COVERAGE_WINDOW = 10;
/**
 * From this cosine similarity two results say the same thing (with the local model, a fact told again in other
 * words measured 0.84–1.00; two distinct facts on one topic, such as where and when a club meets, up to 0.75).
 */
const COPY_SIMILARITY = 0.82;

/**
 * `results` (best first) with each near-copy of a better result moved after the rest. A near-copy is at least
 * COPY_SIMILARITY alike (`similarity(i, j)`, the cosine similarity of results i and j; null when unknown) and
 * names no name or number the better one does not: "Dr Kaur on Gloucester Road" and "Dr Byrne at Easton Dental"
 * are alike, and two facts. Two facts of one sentence must also state the same fact (comparerOf); when either says
 * several sentences, the copy must say no word the better one does not.
 * `distinct(i, j)`: a pair that must stay apart however alike (two versions of a fact
 * at different times, recall-time.ts).
 */
export function spreadNearCopies<T extends { readonly text: string }>(
  results: readonly T[],
  similarity: (i: number, j: number) => number | null,
  distinct: (i: number, j: number) => boolean = () => false,
): T[] {
  const names = results.map((result) => namesIn(result.text));
  const words = results.map((result) => wordsIn(result.text));
  const several = results.map((result) => severalSentences(result.text));
  const kept: number[] = [];
  const copies: number[] = [];
  results.forEach((_, index) => {
    // A text with every word of the better one and more ("… penicillin and amoxicillin") adds a detail, whatever
    // remember would make of it (there a wrong "same" is kept as a restatement; here it would push the detail down).
    const addsDetail = (better: number) => [...words[better]!].every((word) => words[index]!.has(word)) && words[index]!.size > words[better]!.size;
    const sameFact = (better: number, alike: number) => !addsDetail(better) && comparerOf(results[index]!.text)(results[better]!.text, alike).same;
    const within = (better: number, alike: number) =>
      [...names[index]!].every((name) => names[better]!.has(name)) &&
      (several[index] || several[better] ? [...words[index]!].every((word) => words[better]!.has(word)) : sameFact(better, alike));
    const copy = kept.some((better) => {
      const alike = similarity(better, index) ?? 0;
      return alike >= COPY_SIMILARITY && within(better, alike) && !distinct(better, index);
    });
    (copy ? copies : kept).push(index);
  });
  return [...kept, ...copies].map((index) => results[index]!);
}

/**
 * Where the bridge's answer goes at the lowest. A question the bridge runs for asks a fact about a person it names
 * by a role or a pronoun, and the fact calls them by name: the whole question's rankings share the role's or the
 * first clause's words, and its own only the name. "Beatriz's husband Rui teaches maths" (for "Who is Leon's sister,
 * and who is she married to?") ranked eighth, "Alan worked as a marine engineer" (for "What did my dad do for a
 * living?", through "Tomasz's father is Alan Wren") sixth. Third place leaves the two best where they were
 * (bench/README.md, "A later clause's answer among the first results", "The bridge's answer for a role question").
 */
export const BRIDGED_ANSWER_PLACE = 2;

/**
 * `ranked` with the best of `bridgeHits` (the bridge retriever's ranking, best first) that is not already among
 * the first BRIDGED_ANSWER_PLACE + 1 results moved up to that place; scores stay with the places. Unchanged when
 * there is no such hit or it is not ranked at all.
 */
export function withBridgedAnswer<T extends { readonly id: number; readonly score: number }>(ranked: readonly T[], bridgeHits: readonly number[]): T[] {
  const first = new Set(ranked.slice(0, BRIDGED_ANSWER_PLACE + 1).map((item) => item.id));
  const answer = bridgeHits.find((id) => !first.has(id));
  const at = ranked.findIndex((item) => item.id === answer);
  if (at < 0) return [...ranked];
  const order = [...ranked];
  const [moved] = order.splice(at, 1);
  order.splice(BRIDGED_ANSWER_PLACE, 0, moved!);
  return order.map((item, position) => ({ ...item, score: ranked[position]!.score }));
}

/**
 * The names (capitalised words; a sentence's first only when no grammar word) and numbers a text names, in
 * lowercase, singular; a count written as a word as its digits ("one week in six" names what "in 6" does: one fact,
 * as remember judges it, not two versions). "One" stays a word: as often a pronoun ("the red one") as a count.
 */
export function namesIn(text: string): Set<string> {
  const names = new Set<string>();
  for (const sentence of text.split(/[.!?;:]\s+/)) {
    const words = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}'@.,-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu) ?? [];
    words.forEach((word, position) => {
      // "Wednesdays" names what "Wednesday" does.
      const lower = word.replace(/'s$/, '').toLowerCase().replace(/(?<=\p{L}{3})s$/u, '');
      const count = SPELLED_COUNTS.get(lower);
      if (count !== undefined) names.add(count);
      else if ((/^\p{Lu}/u.test(word) && (position > 0 || !STOP_WORDS.has(lower))) || /\d/.test(word)) names.add(lower);
    });
  }
  return names;
}

const SPELLED_COUNTS = new Map<string, string>(SMALL_NUMBERS.flatMap((word, value) => (value < 2 ? [] : [[word, String(value)] as [string, string]])));

/** A sentence ending inside the text ("… amazing. By the way, …"), not after a title ("Dr. Patel"). */
const SENTENCE_BREAK = /(?<!\b(?:Dr|Mr|Mrs|Ms|St|Prof))[.!?]\s+\S/;

/** Whether a text says several sentences (a conversation's turn, a note) rather than one fact. */
export function severalSentences(text: string): boolean {
  return SENTENCE_BREAK.test(text.trim());
}

/** A text's words in lowercase. */
function wordsIn(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []);
}
