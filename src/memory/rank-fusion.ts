/**
 * Evidence-weighted reciprocal rank fusion: an id at 1-based rank r in ranking i earns
 * weight_i × confidence_i(id) / (k + r). Ranks, not raw scores, are summed, so the retrievers' incomparable
 * scales (cosine similarity, full-text rank) need no calibration; the confidence (0–1, default 1) says how much
 * of the query an item's evidence covers, so a full-text hit on one ordinary word of a longer question, ranked
 * first because nothing better shares a word, adds little, and a hit on every rare word adds the full weight.
 * Scores are normalised to (0, 1]: 1 means ranked first, with full confidence, by every retriever.
 */
export interface FusedItem {
  readonly id: number;
  readonly score: number;
}

export interface Ranking {
  /** Ids, best first. */
  readonly ids: readonly number[];
  readonly weight: number;
  /** One per id, 0–1; absent means 1 for every id. */
  readonly confidence?: readonly number[];
}

export function fuseRankings(rankings: readonly Ranking[], k: number): FusedItem[] {
  const scores = new Map<number, number>();
  for (const { ids, weight, confidence } of rankings) {
    if (confidence !== undefined && confidence.length !== ids.length) throw new RangeError('one confidence per id');
    ids.forEach((id, position) => scores.set(id, (scores.get(id) ?? 0) + (weight * (confidence?.[position] ?? 1)) / (k + position + 1)));
  }
  const best = rankings.reduce((sum, { weight }) => sum + weight / (k + 1), 0);
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score: score / best }))
    // Ties (e.g. one hit in each list at the same rank) go to the newer memory.
    .sort((a, b) => b.score - a.score || b.id - a.id);
}
