import { readFirstResults, type FirstResult } from '../db/memories/first-results.js';
import type { MemoryRecord } from '../db/memories/records.js';
import type { DbTransaction } from '../db/schema.js';
import type { FusedItem } from './rank-fusion.js';
import { COVERAGE_WINDOW, spreadNearCopies } from './recall-coverage.js';
import { orderByTime, TIME_WINDOW, timeMark } from './recall-time.js';
import type { SpaceKeys } from '../db/memories/filters.js';

/** How much of each first result's text the time words are looked for in. */
const ARRANGE_CHARS = 2000;

/** The results recall shows, read once: how many, and how much of each text. */
export interface ResultsWanted {
  readonly limit: number;
  readonly maxChars: number;
}

export interface ArrangedResults {
  /** Every ranked id, best first. */
  readonly ranked: readonly FusedItem[];
  /** The first `limit` of them that are still stored, as recall shows them (text cut to `maxChars`). */
  readonly records: ReadonlyMap<number, MemoryRecord>;
}

/**
 * The fused ranking with its first results arranged: versions of a fact in time order for the question
 * (recall-time.ts), then near-copies after the results that add something (recall-coverage.ts). One statement
 * reads the results recall shows and, for the first ones, their texts, times and mutual similarities. Scores stay
 * with the places, so they still fall from the first result down. Left as it is when one of the first results
 * expired since it was ranked.
 */
export async function arrangeFirstResults(trx: DbTransaction, spaces: SpaceKeys, question: string, ranked: readonly FusedItem[], wanted: ResultsWanted): Promise<ArrangedResults> {
  const first = ranked.slice(0, Math.max(TIME_WINDOW, COVERAGE_WINDOW));
  // Arranging only moves ids within `first`, so the ids shown are among these whatever it does.
  const shown = ranked.slice(0, Math.max(first.length, wanted.limit)).map((item) => item.id);
  const compared = first.length < 2 ? [] : first.map((item) => item.id);
  const read = await readFirstResults(trx, spaces, shown, compared, { maxChars: wanted.maxChars, arrangeChars: ARRANGE_CHARS });
  const rows = new Map(read.map((row) => [row.record.id, row]));
  const arranged = compared.length === 0 || compared.some((id) => !rows.has(id)) ? [...ranked] : arrange(question, first, rows, ranked);
  const records = new Map<number, MemoryRecord>();
  for (const item of arranged.slice(0, wanted.limit)) {
    const row = rows.get(item.id);
    if (row !== undefined) records.set(item.id, row.record);
  }
  return { ranked: arranged, records };
}

function arrange(question: string, first: readonly FusedItem[], rows: ReadonlyMap<number, FirstResult>, ranked: readonly FusedItem[]): FusedItem[] {
  const all = first.map((item, position) => {
    const { record, arrangeText, similarities } = rows.get(item.id)!;
    return { id: item.id, text: arrangeText, whole: record.textChars <= ARRANGE_CHARS, createdAt: record.createdAt, lastConfirmedAt: record.lastConfirmedAt, similarities, position, score: item.score };
  });
  // Asked in a memory's own words (read whole), that memory comes first: whatever versions or near-copies of it
  // say, a client looking up what it stored finds it (the others of the same fact follow, arranged as usual).
  const asked = wordForWord(question);
  const exact = all.find((result) => result.whole && wordForWord(result.text) === asked);
  const results = exact === undefined ? all : all.filter((result) => result !== exact);
  const similarity = (a: (typeof results)[number], b: (typeof results)[number]) => a.similarities[b.position] ?? null;
  const timed = orderByTime(question, results.slice(0, TIME_WINDOW), (i, j) => similarity(results[i]!, results[j]!));
  // The exact one leads the coverage stage too, so its near-copies make room like any others.
  const inTimeOrder = [...(exact === undefined ? [] : [exact]), ...timed, ...results.slice(TIME_WINDOW)];
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
