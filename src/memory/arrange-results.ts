import { readFirstResults } from '../db/memories/first-results.js';
import type { DbTransaction } from '../db/schema.js';
import type { FusedItem } from './rank-fusion.js';
import { COVERAGE_WINDOW, spreadNearCopies } from './recall-coverage.js';
import { orderByTime, TIME_WINDOW, timeMark } from './recall-time.js';
import type { SpaceKeys } from '../db/memories/filters.js';

/** How much of each first result's text the time words are looked for in. */
const ARRANGE_CHARS = 2000;

/**
 * The fused ranking with its first results arranged: versions of a fact in time order for the question
 * (recall-time.ts), then near-copies after the results that add something (recall-coverage.ts). One statement
 * reads the first results' texts, times and mutual similarities. Scores stay with the places, so they still
 * fall from the first result down. Left as it is when one of the first results expired since it was ranked.
 */
export async function arrangeFirstResults(trx: DbTransaction, spaces: SpaceKeys, question: string, ranked: readonly FusedItem[]): Promise<FusedItem[]> {
  const first = ranked.slice(0, Math.max(TIME_WINDOW, COVERAGE_WINDOW));
  if (first.length < 2) return [...ranked];
  const rows = new Map((await readFirstResults(trx, spaces, first.map((item) => item.id), ARRANGE_CHARS)).map((row) => [row.id, row]));
  if (rows.size < first.length) return [...ranked];
  const results = first.map((item, position) => ({ ...rows.get(item.id)!, position }));
  const similarity = (a: (typeof results)[number], b: (typeof results)[number]) => a.similarities[b.position] ?? null;
  const timed = orderByTime(question, results.slice(0, TIME_WINDOW), (i, j) => similarity(results[i]!, results[j]!));
  const inTimeOrder = [...timed, ...results.slice(TIME_WINDOW)];
  const spread = spreadNearCopies(
    inTimeOrder.slice(0, COVERAGE_WINDOW),
    (i, j) => similarity(inTimeOrder[i]!, inTimeOrder[j]!),
    (i, j) => timeMark(inTimeOrder[i]!.text) !== timeMark(inTimeOrder[j]!.text),
  );
  const arranged = [...spread, ...inTimeOrder.slice(COVERAGE_WINDOW)];
  return [...arranged.map((result, position) => ({ id: result.id, score: ranked[position]!.score })), ...ranked.slice(first.length)];
}
