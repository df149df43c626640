import { readFirstResults, type FirstResult } from '../db/memories/first-results.js';
import type { TextHit, TextRankingStatement } from '../db/memories/text-ranking.js';
import type { MemoryRecord } from '../db/memories/records.js';
import type { DbTransaction } from '../db/schema.js';
import type { FusedItem } from './rank-fusion.js';
import { COVERAGE_WINDOW, spreadNearCopies } from './recall-coverage.js';
import { laterVersionOf, orderByTime, TIME_WINDOW, timeMark } from './recall-time.js';
import type { SpaceKeys } from '../db/memories/filters.js';

/** How much of each first result's text the time words are looked for in. */
const ARRANGE_CHARS = 2000;

/** The results recall shows, read once: how many, and how much of each text. */
export interface ResultsWanted {
  readonly limit: number;
  readonly maxChars: number;
}

/** The question, with the names the user goes by in the memories (self-names.ts). */
export interface AskedQuestion {
  readonly text: string;
  readonly selfNames: readonly string[];
}

export interface ArrangedResults {
  /** Every ranked id, best first. */
  readonly ranked: readonly FusedItem[];
  /** The first `limit` of them that are still stored, as recall shows them (text cut to `maxChars`). */
  readonly records: ReadonlyMap<number, MemoryRecord>;
}

/**
 * A ranking that reads a full-text ranking's hits (the bridge's: recall-ranking.ts), run in the results' statement
 * so that it adds no round trip: `search` is its statement, `rank` the final ranking given its hits, `searchAlone`
 * its hits read apart (when no result came back to carry them).
 */
export interface RankedWithSearch {
  readonly search: TextRankingStatement;
  readonly rank: (hits: readonly TextHit[]) => FusedItem[];
  readonly searchAlone: () => Promise<TextHit[]>;
}

/**
 * The fused ranking with its first results arranged: versions of a fact in time order for the question
 * (recall-time.ts), then near-copies after the results that add something (recall-coverage.ts). One statement
 * reads the results recall shows and, for the first ones, their texts, times and mutual similarities; with
 * `withSearch`, it also runs that search, reads its first hits as candidates, and the ranking is made final from
 * its hits (read again, one more round trip, only when the final first results were not among those read). Scores
 * stay with the places, so they still fall from the first result down. Left as it is when one of the first results
 * expired since it was ranked.
 */
export async function arrangeFirstResults(
  trx: DbTransaction,
  spaces: SpaceKeys,
  question: AskedQuestion,
  ranked: readonly FusedItem[],
  wanted: ResultsWanted,
  withSearch?: RankedWithSearch,
): Promise<ArrangedResults> {
  const window = Math.max(TIME_WINDOW, COVERAGE_WINDOW);
  // Arranging only moves ids within the first `window`, so the ids shown are among these whatever it does.
  const shownOf = (order: readonly FusedItem[]) => order.slice(0, Math.max(window, wanted.limit)).map((item) => item.id);
  const comparedOf = (order: readonly FusedItem[]) => (Math.min(order.length, window) < 2 ? [] : order.slice(0, window).map((item) => item.id));
  const texts = { maxChars: wanted.maxChars, arrangeChars: ARRANGE_CHARS };
  const search = withSearch === undefined ? undefined : { ranking: withSearch.search, read: Math.max(window, wanted.limit), compared: window };
  let read = await readFirstResults(trx, spaces, shownOf(ranked), comparedOf(ranked), texts, search);
  let final = ranked;
  if (withSearch !== undefined) {
    final = withSearch.rank(read.hits ?? (await withSearch.searchAlone()));
    const compared = new Set(read.compared);
    if (shownOf(final).some((id) => !read.asked.has(id)) || comparedOf(final).some((id) => !compared.has(id))) {
      read = await readFirstResults(trx, spaces, shownOf(final), comparedOf(final), texts);
    }
  }
  const rows = new Map(read.results.map((row) => [row.record.id, row]));
  const first = final.slice(0, window);
  const comparedAt = new Map(read.compared.map((id, position) => [id, position]));
  const arranged = comparedOf(final).length === 0 || first.some((item) => !rows.has(item.id)) ? [...final] : arrange(question, first, rows, comparedAt, final);
  const records = new Map<number, MemoryRecord>();
  for (const item of arranged.slice(0, wanted.limit)) {
    const row = rows.get(item.id);
    if (row !== undefined) records.set(item.id, row.record);
  }
  return { ranked: arranged, records };
}

function arrange(
  question: AskedQuestion,
  first: readonly FusedItem[],
  rows: ReadonlyMap<number, FirstResult>,
  comparedAt: ReadonlyMap<number, number>,
  ranked: readonly FusedItem[],
): FusedItem[] {
  const all = first.map((item) => {
    const { record, arrangeText, similarities } = rows.get(item.id)!;
    return { id: item.id, text: arrangeText, whole: record.textChars <= ARRANGE_CHARS, createdAt: record.createdAt, lastConfirmedAt: record.lastConfirmedAt, similarities, score: item.score };
  });
  // Asked in a memory's own words (read whole), that memory comes first: whatever versions or near-copies of it
  // say, a client looking up what it stored finds it (the others of the same fact follow, arranged as usual).
  const asked = wordForWord(question.text);
  const exact = all.find((result) => result.whole && wordForWord(result.text) === asked);
  const results = exact === undefined ? all : all.filter((result) => result !== exact);
  const similarity = (a: (typeof results)[number], b: (typeof results)[number]) => a.similarities[comparedAt.get(b.id) ?? -1] ?? null;
  const timed = orderByTime(question.text, results.slice(0, TIME_WINDOW), (i, j) => similarity(results[i]!, results[j]!), question.selfNames);
  const further = results.slice(TIME_WINDOW);
  const later = exact !== undefined || timed[0] === undefined ? undefined : laterVersionOf(question.text, timed[0], further, similarity);
  // The exact one leads the coverage stage too, so its near-copies make room like any others.
  const inTimeOrder = [...(exact === undefined ? [] : [exact]), ...(later === undefined ? [] : [later]), ...timed, ...further.filter((result) => result !== later)];
  const spread = spreadNearCopies(
    inTimeOrder.slice(0, COVERAGE_WINDOW),
    (i, j) => similarity(inTimeOrder[i]!, inTimeOrder[j]!),
    (i, j) => timeMark(inTimeOrder[i]!.text) !== timeMark(inTimeOrder[j]!.text),
  );
  const arranged = [...spread, ...inTimeOrder.slice(COVERAGE_WINDOW)];
  return [...arranged.map((result, position) => ({ id: result.id, score: ranked[position]!.score })), ...ranked.slice(first.length)];
}

/** A text as compared word for word: case, spacing and the punctuation around it aside. */
const wordForWord = (text: string): string => text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
