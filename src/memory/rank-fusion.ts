/**
 * Weighted reciprocal rank fusion: an id at 1-based rank r in ranking i earns weight_i / (k + r).
 * Rank-based, so the retrievers' incomparable scores (cosine distance, full-text rank) need no calibration.
 * Scores are normalised to (0, 1]: 1 means ranked first by every retriever.
 */
export interface FusedItem {
  readonly id: number;
  readonly score: number;
}

export function fuseRankings(rankings: readonly (readonly number[])[], weights: readonly number[], k: number): FusedItem[] {
  if (rankings.length !== weights.length) throw new RangeError('one weight per ranking');
  const scores = new Map<number, number>();
  rankings.forEach((ranking, index) => {
    const weight = weights[index]!;
    ranking.forEach((id, position) => scores.set(id, (scores.get(id) ?? 0) + weight / (k + position + 1)));
  });
  const best = weights.reduce((sum, weight) => sum + weight / (k + 1), 0);
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score: score / best }))
    // Ties (e.g. one hit in each list at the same rank) go to the newer memory.
    .sort((a, b) => b.score - a.score || b.id - a.id);
}
