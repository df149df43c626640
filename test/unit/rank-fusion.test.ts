import { describe, expect, it } from 'vitest';
import { fuseRankings } from '../../src/memory/rank-fusion.js';

const K = 35;
const ids = (items: readonly { id: number }[]) => items.map((item) => item.id);

describe('fuseRankings (evidence-weighted reciprocal rank fusion)', () => {
  it('scores 1 for an id ranked first with full confidence by every retriever, and each id once', () => {
    const fused = fuseRankings(
      [
        { ids: [7, 3, 5], weight: 1 },
        { ids: [7, 5], weight: 1.75 },
      ],
      K,
    );
    expect(fused[0]).toEqual({ id: 7, score: 1 });
    expect(ids(fused).sort()).toEqual([3, 5, 7]);
    for (const item of fused) expect(item.score).toBeGreaterThan(0);
  });

  it('sums ranks, not the retrievers\' scores: agreement between two lists beats the top of one', () => {
    // 2 is second in both lists; 1 and 4 are each first in one list only.
    const fused = fuseRankings(
      [
        { ids: [1, 2, 3], weight: 1 },
        { ids: [4, 2, 5], weight: 1 },
      ],
      K,
    );
    expect(fused[0]!.id).toBe(2);
  });

  it('lets the heavier retriever decide between two ids each ranked first by one', () => {
    const fused = fuseRankings(
      [
        { ids: [1], weight: 1 },
        { ids: [2], weight: 1.75 },
      ],
      K,
    );
    expect(ids(fused)).toEqual([2, 1]);
  });

  it('scales a hit by its confidence: a first place on an ordinary word adds little', () => {
    // 9 is first in the heavier full-text list: above 1 (first in the vector list) at full confidence, below it
    // when its hit covers a tenth of the question.
    const unweighted = fuseRankings([{ ids: [1], weight: 1 }, { ids: [9], weight: 1.75 }], K);
    expect(ids(unweighted)).toEqual([9, 1]);
    const weighted = fuseRankings([{ ids: [1], weight: 1 }, { ids: [9], weight: 1.75, confidence: [0.1] }], K);
    expect(ids(weighted)).toEqual([1, 9]);
    expect(weighted[1]!.score).toBeCloseTo(unweighted[0]!.score * 0.1, 10);
  });

  it('gives ties to the newer memory (the higher id), and refuses confidences that do not match the ids', () => {
    expect(ids(fuseRankings([{ ids: [4], weight: 1 }, { ids: [8], weight: 1 }], K))).toEqual([8, 4]);
    expect(() => fuseRankings([{ ids: [1, 2], weight: 1, confidence: [1] }], K)).toThrow(RangeError);
    expect(fuseRankings([], K)).toEqual([]);
  });
});
