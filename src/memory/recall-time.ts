import { stemmer } from 'stemmer';
import { POSSESSIVES, STOP_WORDS, WEEKDAY_NAMES } from './english.js';
import { namesIn, severalSentences } from './recall-coverage.js';
import { namingUser } from './self-names.js';

/**
 * Time in recall: when the first results say different things about the same matter at different times ("worked
 * at Acme until 2024", "now works at Globex"), the current one comes first unless the question asks about the past
 * ("Where did I work before?"), which gets the older one first. A stage over the fused ranking's first results:
 * only results about the same matter pass each other, and the one passed goes right after the one passing it, so a
 * misjudged time costs the right answer one place, and each result between them moves down one place. Below the
 * stage's window, only a later version of the first result is looked for (laterVersionOf).
 *
 * What says "current" or "past" is, in order: the words of the texts (a change: "now", "these days", "no longer",
 * "switched", "instead", or a verb of change: "upgraded to", "moved into", "quit", "gave up", "is down to"; a
 * start: "since", "bought", "this year"; the past: "used to", "until", "previously", "before moving", "years
 * ago", "was" before a description), then for two versions of one fact ("The user's dentist is Dr Kaur" / "… is Dr
 * Byrne") the latest year each names and when each was last known to hold (last_confirmed_at, which confirm and
 * restatements move, or its storing); so too for two answers to one slot of which one only says when it started
 * ("… whom he has known since school" / "Oskar's best friend is Tariq Aziz"). Asked about the past, a text marked
 * past passes another only if it answers nearly as well (PAST_SCORE_RATIO); asked what came before a name ("before
 * Japanese"), a text naming it is not the answer.
 */

/** How many of the first results are compared. */
export const TIME_WINDOW = 6;
/**
 * From which cosine similarity (local model) a pair marked at different times is about the same matter, by how
 * far apart the marks are: a text that says it held before against one that does not (a replaced job and the new
 * one measured 0.30–0.65; two facts taken at random, median 0.28, but these are also among the question's first
 * results); one that says it changed ("now", "instead") against an unmarked one (a fact about someone else that
 * says "now" measured 0.47–0.53 against the right answer); one that only says when it started ("since 2022", "this
 * year"), which is as often another fact altogether ("Theo's teacher this year is Mr Bell" / "Theo is 9 and plays
 * the violin", 0.54).
 */
const PAST_SIMILARITY = 0.3;
const CHANGE_SIMILARITY = 0.55;
const START_SIMILARITY = 0.6;
/**
 * A question that says "now" ("What car does the user drive now?") asks for what holds at present: there a text
 * that says when it started ("bought a Kia Niro EV in 2025") passes an unmarked one ("drives a blue Skoda") from
 * this similarity on. Chosen on the timeline set's dev half (0.5 and 0.45 alike: one "now" question more, no other
 * cell of any set moved; lowered for every question, own dev R@1 fell 0.688 → 0.662). A text that says it changed
 * ("these days", "now") claims the present more plainly than one that says when it started, so such a question
 * lets it pass an unmarked one from here too: "These days the user carries an iPhone 15 Pro" passes "My phone is a
 * Google Pixel 6" (0.54) for "What phone do I have at the moment?".
 */
const START_SIMILARITY_ASKED_NOW = 0.5;
/**
 * Two versions of one fact that mark no time (or the same) are nearly alike ("The user's dentist is Dr Kaur on
 * Gloucester Road" / "… is Dr Byrne at Easton Dental", 0.86), say it in mostly the same words and name different
 * names or numbers.
 */
const VERSION_SIMILARITY = 0.7;
const VERSION_SHARED_WORDS = 0.5;
/**
 * Two results that say the same thing of the same one ("Tomasz drives …" / "I drive …", the user being Tomasz; "My
 * usual run is …" / "The user's usual run is …"), what the question asks about, are rival answers, put in time
 * order as versions of one fact are: asked about the present, the one stored or confirmed last first; about the
 * past, the other. From this similarity on: rival answers written apart measured 0.45–0.80 in the fresh and blind
 * sets (the lowest of their dev halves, 0.449: "Tomasz plays bass guitar in a covers band" / "I play keyboards in
 * Heavy Weather, a ceilidh band"); texts that share a word of the question and say other things, 0.39–0.59
 * ("Marcus works 7:30 to 4" / "Marcus bikes to work", 0.59, which the slot tells apart).
 */
const RIVAL_SIMILARITY = 0.44;

/**
 * A question about the past draws texts marked past about other matters into the first results by its wording
 * ("Which running club was I in before?" found "I used to play rugby at uni" among them, similarity 0.47 to "My
 * running club is Leith Harriers", as near as a replaced fact to its replacement): such a text passes another only
 * with at least this share of the other's fused score (bench/README.md, "Past questions").
 */
const PAST_SCORE_RATIO = 0.8;

/** 2: the text says it changed and holds now; 1: when it started; 0: no time; -1: that it held before. */
export type TimeMark = 2 | 1 | 0 | -1;

const CHANGED =
  /\b(?:now|nowadays|currently|these days|at the moment|at present|presently|no longer|any ?more(?=\s*(?:[.,;!]|$))|instead|switched|again|upgraded|downgraded|swapped|replaced|traded in|quit|gave up|moved (?:to|into|in with|over to)|changed (?:to|over)|(?:is|am|are|'m|'re) (?:down|up) to)\b/i;
const STARTED = /\b(?:since|as of|still|recently|lately|this year|bought|started|joined|took up|has taken up|became|adopted)\b/i;
/** Words that place a text or a question in the past, in both: "back then", "three years ago". */
const PAST_WORDS = String.raw`used to|previously|formerly|former|ex-|back then|back in|in the past|growing up|\w+ (?:years?|months?) ago`;
const PAST = new RegExp(
  String.raw`\b(?:${PAST_WORDS}|until|till|at (?:school|uni|university|college)|before (?:moving|that|then|\d{4})|when (?:i|he|she|they|we|you) (?:was|were|lived|worked|had)|(?:lived|worked|earned|banked|owned|rented|drove|played|studied|had) [^.;]*\bfor (?:\w+ )?(?:years|months))\b`,
  'i',
);
/**
 * The name a question about the past places its answer before ("Which language did I study before Japanese?",
 * "Who was my doctor before Dr Varma?"): a result that names it tells what came after, not the answer, and goes
 * after a result about the same matter that does not: from PAST_SIMILARITY for a result that says it held before,
 * from RIVAL_SIMILARITY for another (an unrelated fact in the first results measured 0.37: "The user is learning
 * Japanese …" / "The user's NHS number is …").
 */
const BEFORE_REFERENCE = /\b[Bb]efore (?:(?:Dr|Mr|Mrs|Ms|Miss|Prof)\.?\s+)?(\p{Lu}\p{Ll}+)(?![\p{L}\p{N}])/u;
/** "Before Northwind, …": before a name (not "before lunch"). */
const BEFORE_NAME = /\b[Bb]efore \p{Lu}/u;
/** "was"/"were" before a description ("The user's GP was Dr Patel"), not before an event's participle ("was born"). */
const PAST_STATE = /\b(?:was|were) (?!born\b|bitten\b|diagnosed\b|told\b|given\b|made\b|taken\b|\w+ed\b)/i;

/**
 * What a memory's text says about when it holds. A text of several sentences (a conversation's turn: "How was
 * your trip? … I sold my old car") says nothing as a whole: its time words belong to one sentence each.
 */
export function timeMark(text: string): TimeMark {
  if (severalSentences(text)) return 0;
  if (CHANGED.test(text)) return 2;
  if (STARTED.test(text)) return 1;
  return PAST.test(text) || BEFORE_NAME.test(text) || PAST_STATE.test(text) ? -1 : 0;
}

const QUESTION_NOW = /\b(?:now|nowadays|currently|current|these days|at the moment|at present|presently|still|today|this year)\b/i;
const QUESTION_PAST = new RegExp(
  String.raw`\b(?:${PAST_WORDS}|use to|before|previous|originally|as a (?:child|kid|student|teenager)|when (?:i|he|she|they|we|you) (?:was|were|lived|worked|had|did)|did [^?]*\bever)\b|\b(?:${POSSESSIVES.join('|')}|the user's|user's) old\b`,
  'i',
);
const PAST_TENSE = /\b(?:was|were|did|had)\b/i;

/** Whether a question says it asks about the present in so many words ("now", "these days", "currently"). */
function saysNow(question: string): boolean {
  return QUESTION_NOW.test(question);
}

/**
 * What a question asks about: the past ("used to", "before", "my old boss"), the present (a present-tense
 * question, or one that says "now"), or neither: a question in the past tense that names no time ("What was my
 * cholesterol?") asks about something that happened, not about what held before, so no version is preferred.
 */
export function questionTime(question: string): 'past' | 'present' | 'either' {
  const text = question.replace(/[’]/g, "'");
  // "What does my old flatmate do now?" asks about now; "Where did I work before my current job?" about before:
  // "current" names a thing, where "now" says when.
  if (QUESTION_NOW.test(text.replace(/\bcurrent\b/gi, ''))) return 'present';
  if (QUESTION_PAST.test(text)) return 'past';
  if (saysNow(text)) return 'present';
  return PAST_TENSE.test(text) ? 'either' : 'present';
}

export interface TimedResult {
  readonly id: number;
  readonly text: string;
  readonly createdAt: Date;
  readonly lastConfirmedAt: Date;
  /** Its fused score (how well it answers the question, before time is considered). */
  readonly score: number;
}

/**
 * `results` (the first results, best first) with the results about the same matter put in time order: for a
 * question about the past, what held before first; otherwise what holds now. `similarity(i, j)` is the cosine
 * similarity of results i and j (null when unknown: never the same matter). A result that should come first is
 * moved in front of the one it passes, which goes down one place with those between them.
 */
export function orderByTime<T extends TimedResult>(
  question: string,
  results: readonly T[],
  similarity: (i: number, j: number) => number | null,
  selfNames: readonly string[] = [],
): T[] {
  const asked = questionTime(question);
  if (asked === 'either') return [...results];
  const startSimilarity = saysNow(question) ? START_SIMILARITY_ASKED_NOW : START_SIMILARITY;
  const direction = asked === 'past' ? -1 : 1;
  const marks = results.map((result) => timeMark(result.text));
  // The user's own name is the user: "Tomasz drives …" and "I drive …" are about one person.
  const facts = results.map((result) => {
    const text = namingUser(result.text, selfNames);
    return { words: frameWords(text), names: namesIn(text), year: latestYear(text), slot: slotOf(text), oneSentence: !severalSentences(text), uses: askedWords(text.toLowerCase()) };
  });
  const questionAsked = namingUser(question, selfNames);
  const asks = namesIn(questionAsked);
  const askedFrame = askedWords(questionAsked);
  /** The question names what tells two versions apart ("fact number 4", "Dr Kaur"): it asks about that one. */
  const singlesOut = (a: FactShape, b: FactShape): boolean => [...asks].some((name) => a.names.has(name) !== b.names.has(name));
  /**
   * Both say what the question asks about of the same one: the same slot, which the question names; or, two facts
   * whose subject no slot reads ("Home internet is Xfinity …" / "The house has Ziply Fiber …", for "Who provides our
   * home internet?"), about the same matter (CHANGE_SIMILARITY: a word of the question means little alone, "a 529
   * college savings plan" / "a college student" who babysits), a word of the question both use, each naming what the
   * other does not (two answers, not one told twice, nor a detail added).
   */
  const rivals = (a: FactShape, b: FactShape, similar: number): boolean => {
    if (a.slot === undefined || b.slot === undefined) {
      const namesOwn = (x: FactShape, y: FactShape) => [...x.names].some((name) => !y.names.has(name));
      const bothUse = [...a.uses].some((word) => askedFrame.has(word) && b.uses.has(word));
      return similar >= CHANGE_SIMILARITY && a.slot === b.slot && a.oneSentence && b.oneSentence && namesOwn(a, b) && namesOwn(b, a) && bothUse;
    }
    return similar >= RIVAL_SIMILARITY && a.slot.whose === b.slot.whose && a.slot.what === b.slot.what && askedFrame.has(a.slot.what);
  };
  const reference = asked === 'past' ? BEFORE_REFERENCE.exec(questionAsked)?.[1] : undefined;
  const namesReference = reference === undefined ? undefined : namingAfter(results, reference);
  /** > 0 when result b should come before result a. */
  const preference = (a: number, b: number): number => {
    const similar = similarity(a, b);
    if (similar === null) return 0;
    if (namesReference !== undefined && namesReference[a] !== namesReference[b] && similar >= (marks[namesReference[a] ? b : a] === -1 ? PAST_SIMILARITY : RIVAL_SIMILARITY)) {
      return namesReference[a] ? 1 : -1;
    }
    const rival = rivals(facts[a]!, facts[b]!, similar);
    const [markA, markB] = [marks[a]!, marks[b]!];
    // Two answers to one slot, one saying when it started and the other no time: both may hold from a start, so
    // which came later is said by when each was last known to hold, as for two unmarked versions.
    const startAgainstNone = rival && Math.min(markA, markB) === 0 && Math.max(markA, markB) === 1;
    if (markA !== markB && !startAgainstNone) {
      const needed = Math.min(markA, markB) === -1 ? PAST_SIMILARITY : Math.max(markA, markB) === 2 ? Math.min(CHANGE_SIMILARITY, startSimilarity) : startSimilarity;
      if (similar < needed && !rival) return 0;
      // Asked about the past, a text marked past goes up only if it answers nearly as well as the one it passes.
      const [older, newer] = markB < markA ? [b, a] : [a, b];
      if (asked === 'past' && results[older]!.score < PAST_SCORE_RATIO * results[newer]!.score) return 0;
      return direction * (markB - markA);
    }
    if (!rival && (similar < VERSION_SIMILARITY || !versions(facts[a]!, facts[b]!) || singlesOut(facts[a]!, facts[b]!))) return 0;
    const [yearA, yearB] = [facts[a]!.year, facts[b]!.year];
    if (yearA !== undefined && yearB !== undefined && yearA !== yearB) return direction * (yearB - yearA);
    return direction * (knownAt(results[b]!) - knownAt(results[a]!) || results[b]!.id - results[a]!.id);
  };
  const order = results.map((_, index) => index);
  // Moves until every compared pair is in order (or a few passes: the preference need not be transitive). A move,
  // not a swap: swapped, the passed version fell as far as the other had ranked, out of the first five for some
  // questions (bench/README.md, "Passed versions go down one place").
  for (let pass = 0; pass < results.length; pass++) {
    let moved = false;
    for (let i = 0; i < order.length; i++) {
      for (let j = i + 1; j < order.length; j++) {
        if (preference(order[i]!, order[j]!) > 0) {
          order.splice(i, 0, ...order.splice(j, 1));
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return order.map((index) => results[index]!);
}

/**
 * The later version of the first result, found below the time window among `further` (the results compared with
 * it besides): asked about the present, when the first result marks no time, the first of them that says it
 * changed and is about the same matter (CHANGE_SIMILARITY, as within the window): "I left nursing last year and now
 * teach biology", 7th for "What is my job?", under "I work as a nurse at the Royal Infirmary". Such a text names the
 * new thing, not what was asked, so the question's words alone can rank it below results about other matters. Only
 * the first result's: moved in front of any unmarked result, a changed text about another matter pushed the
 * answer out of the first five for a blind dev question (bench/README.md, "A later version below the window").
 */
export function laterVersionOf<T extends { readonly text: string }>(question: string, first: T, further: readonly T[], similarity: (a: T, b: T) => number | null): T | undefined {
  if (questionTime(question) !== 'present' || timeMark(first.text) !== 0) return undefined;
  return further.find((result) => timeMark(result.text) === 2 && (similarity(result, first) ?? 0) >= CHANGE_SIMILARITY);
}

/**
 * For each result, whether it names `name` (a whole word, as names are matched elsewhere: "Zoë" is not "Zo") other
 * than as "before <name>": a result that itself says "before Christmas" is about that time, not after it.
 */
function namingAfter(results: readonly TimedResult[], name: string): boolean[] {
  const named = new RegExp(String.raw`(?<![\p{L}\p{N}])${name}(?![\p{L}\p{N}])`, 'u');
  const namedAsBefore = new RegExp(String.raw`\b[Bb]efore ${name}(?![\p{L}\p{N}])`, 'u');
  return results.map((result) => named.test(result.text) && !namedAsBefore.test(result.text));
}

interface FactShape {
  readonly words: ReadonlySet<string>;
  readonly names: ReadonlySet<string>;
  readonly year: number | undefined;
  readonly slot: Slot | undefined;
  readonly oneSentence: boolean;
  /** Its words as a question's are read (askedWords), a capitalised first word included. */
  readonly uses: ReadonlySet<string>;
}

/** What a text says something of: who or whose ("user", "sam's"), and what (a stemmed verb or thing). */
interface Slot {
  readonly whose: string;
  readonly what: string;
}

/**
 * The slot a text fills, read from its first person: "Tomasz drives a red Skoda" (Tomasz the user): the user,
 * "drive"; "My usual run is 5 km": the user's, "run" (the last word of the phrase owned); "Sam's mother Ruth lives
 * in Harrogate": Sam's, "mother". Undefined when it names nobody.
 */
function slotOf(text: string): Slot | undefined {
  const tokens = asTheUser(text).match(/[\p{L}\p{N}][\p{L}\p{N}'-]*|[,;:.()]/gu) ?? [];
  for (let at = 0; at < tokens.length; at++) {
    const token = tokens[at]!;
    // A capitalised word opening the text may be any word ("Home internet is …"); after it, it is a name.
    const owner = token === 'user' && tokens[at - 1]?.toLowerCase() === 'the' ? 'user' : at > 0 && /^\p{Lu}\p{Ll}+$/u.test(token) && !STOP_WORDS.has(token.toLowerCase()) ? token.toLowerCase() : undefined;
    const possessive = token === "user's" || /^\p{Lu}\p{Ll}+'s$/u.test(token) ? token.toLowerCase().replace(/'s$/, '') : undefined;
    if (possessive !== undefined) {
      let head: string | undefined;
      for (const word of tokens.slice(at + 1)) {
        if (isPlain(word)) head = word.replace(/'s$/, '');
        else if (!WEEKDAY.has(word)) break;
      }
      return head === undefined ? undefined : { whose: `${possessive}'s`, what: stemmer(head) };
    }
    if (owner !== undefined) {
      let next = at + 1;
      while (next < tokens.length && SKIPPED_BEFORE_VERB.test(tokens[next]!)) next++;
      const verb = tokens[next];
      return verb === undefined || !isPlain(verb) || LIGHT_VERBS.test(verb) ? undefined : { whose: owner, what: stemmer(verb) };
    }
  }
  return undefined;
}

/** Verbs that say little without their object ("takes sertraline" / "takes oat milk", "gets hay fever"). */
const LIGHT_VERBS = /^(?:take|get|have|make|do|go|keep|give|put|come|let|set|use)(?:s|es|ing|ed)?$|^(?:took|got|gotten|made|did|went|kept|gave|came|used)$/;
/** A day's name inside an owned phrase says which, it does not end the phrase: "my regular Sunday run" is a run. */
const WEEKDAY = new Set(WEEKDAY_NAMES.map((day) => day[0]!.toUpperCase() + day.slice(1)));
const isPlain = (token: string): boolean => /^\p{Ll}[\p{Ll}-]*$/u.test(token) && !STOP_WORDS.has(token);
/** Words between someone and what they do: "Tomasz only goes", "the user now cycles", "I'm" read as "is". */
const SKIPPED_BEFORE_VERB = /^(?:\p{Ll}+ly|only|also|still|now|often|always|never|sometimes|usually|mostly|just|is|are|was|were|has|have)$/u;

/** First-person words as the user: "I drive" → "the user drive", "my run" → "the user's run", "we" → "the user". */
const asTheUser = (text: string): string =>
  text
    .replace(/[’]/g, "'")
    .replace(/\b(?:I'm|I am)\b/g, 'the user is')
    .replace(/\bI've\b/g, 'the user has')
    .replace(/\b(?:I|[Ww]e)\b/g, 'the user')
    .replace(/\b(?:[Mm]y|[Oo]ur)\b/g, "the user's");

/** A question's lowercase words that are not grammar, stemmed ("drives" = "drive", "weighed" = "weigh"). */
function askedWords(text: string): Set<string> {
  const words = text.match(/\b\p{Ll}[\p{Ll}'-]*/gu) ?? [];
  return new Set(words.map((word) => word.replace(/'s$/, '')).filter((word) => word.length > 2 && !STOP_WORDS.has(word)).map((word) => stemmer(word)));
}

/** Two texts that say mostly the same words about different names or numbers: two versions of one fact. */
function versions(a: FactShape, b: FactShape): boolean {
  const shared = [...a.words].filter((word) => b.words.has(word)).length;
  const union = new Set([...a.words, ...b.words]).size;
  const sameNames = a.names.size === b.names.size && [...a.names].every((name) => b.names.has(name));
  return union > 0 && shared / union >= VERSION_SHARED_WORDS && !sameNames;
}

/** A text's lowercase words that are neither grammar, names nor numbers, roughly stemmed ("works" → "work"). */
function frameWords(text: string): Set<string> {
  const words = text.match(/\b\p{Ll}[\p{Ll}'-]*/gu) ?? [];
  return new Set(words.filter((word) => word.length > 2 && !STOP_WORDS.has(word)).map((word) => word.replace(/'s$/, '').replace(/(?<=\w{3})(?:ing|ed|es|s)$/, '')));
}

/** The latest year a text names (1900–2099), or undefined. */
function latestYear(text: string): number | undefined {
  const years = (text.match(/\b(?:19|20)\d{2}\b/g) ?? []).map(Number);
  return years.length === 0 ? undefined : Math.max(...years);
}

/** When a memory was last known to hold: confirmed (or restated) then, stored at the latest. */
const knownAt = (result: TimedResult): number => Math.max(result.lastConfirmedAt.getTime(), result.createdAt.getTime());
