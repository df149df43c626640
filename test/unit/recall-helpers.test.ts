import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/db/memories/records.js';
import { fitToBudget } from '../../src/memory/budget.js';
import { fuseRankings } from '../../src/memory/rank-fusion.js';
import { decodeCursor, encodeCursor } from '../../src/tools/list-cursor.js';

describe('fuseRankings', () => {
  const rank = (ids: number[], weight: number, confidence?: number[]) => ({ ids, weight, ...(confidence === undefined ? {} : { confidence }) });

  it('scores 1 for an id ranked first everywhere, and sums weighted reciprocal ranks', () => {
    const fused = fuseRankings([rank([1, 2, 3], 1), rank([1, 3], 2)], 20);
    expect(fused.map((item) => item.id)).toEqual([1, 3, 2]);
    expect(fused[0]!.score).toBe(1);
    const best = 1 / 21 + 2 / 21;
    expect(fused[1]!.score).toBeCloseTo((1 / 23 + 2 / 22) / best, 12);
    expect(fused[2]!.score).toBeCloseTo(1 / 22 / best, 12);
  });

  it('scales each item by the confidence of its evidence', () => {
    // A full-text hit covering a tenth of the query, ranked first, loses to the vectors' first choice.
    expect(fuseRankings([rank([5], 1), rank([6], 1.5, [0.1])], 20).map((item) => item.id)).toEqual([5, 6]);
    // With full coverage the same hit wins.
    expect(fuseRankings([rank([5, 7], 1), rank([7], 1.5, [1])], 20).map((item) => item.id)).toEqual([7, 5]);
    const fused = fuseRankings([rank([5], 1), rank([6], 1, [0.5])], 20);
    expect(fused[1]).toEqual({ id: 6, score: 0.5 / 21 / (2 / 21) });
  });

  it('lets the heavier ranking win a disagreement, and breaks exact ties by the newer id', () => {
    expect(fuseRankings([rank([5], 1), rank([6], 1.5)], 20).map((item) => item.id)).toEqual([6, 5]);
    expect(fuseRankings([rank([5], 1), rank([6], 1)], 20).map((item) => item.id)).toEqual([6, 5]);
  });

  it('handles empty and single rankings, and refuses a confidence list of another length', () => {
    expect(fuseRankings([rank([], 1), rank([], 1)], 20)).toEqual([]);
    expect(fuseRankings([rank([9, 8], 1)], 20).map((item) => item.id)).toEqual([9, 8]);
    expect(() => fuseRankings([rank([1, 2], 1, [1])], 20)).toThrow(RangeError);
  });
});

describe('list cursor', () => {
  it('round-trips a position', () => {
    const cursor = { createdAt: '2025-03-04T05:06:07.123456Z', id: 42 };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it.each([
    ['empty', ''],
    ['not base64 JSON', '%%%'],
    ['a JSON object', Buffer.from('{"createdAt":"x","id":1}').toString('base64url')],
    ['milliseconds only', Buffer.from(JSON.stringify(['2025-03-04T05:06:07.123Z', 1])).toString('base64url')],
    ['an impossible date', Buffer.from(JSON.stringify(['2025-02-30T05:06:07.123456Z', 1])).toString('base64url')],
    ['an id of zero', Buffer.from(JSON.stringify(['2025-03-04T05:06:07.123456Z', 0])).toString('base64url')],
    ['an unsafe id', Buffer.from(JSON.stringify(['2025-03-04T05:06:07.123456Z', 2 ** 60])).toString('base64url')],
    ['an id as a string', Buffer.from(JSON.stringify(['2025-03-04T05:06:07.123456Z', '1'])).toString('base64url')],
  ])('rejects %s', (_name, text) => {
    expect(decodeCursor(text)).toBeUndefined();
  });
});

describe('fitToBudget', () => {
  const row = (id: number, chars: number): MemoryRecord => ({
    id,
    text: 'x'.repeat(Math.min(chars, 50)),
    textChars: chars,
    tags: [],
    importance: 0.5,
    captureMode: null,
    sourceProvider: null,
    sessionId: null,
    createdAt: new Date(0),
    lastConfirmedAt: new Date(0),
    expiresAt: null,
    spaceKey: 'alice',
    author: null,
  });

  it('keeps rows in order while they fit, and never skips ahead', () => {
    const { kept, cut } = fitToBudget([row(1, 20), row(2, 20), row(3, 30), row(4, 5)], 50);
    expect(kept.map((item) => item.row.id)).toEqual([1, 2]);
    expect(cut).toBe(true);
  });

  it('fills the budget exactly without cutting', () => {
    const { kept, cut } = fitToBudget([row(1, 25), row(2, 25)], 50);
    expect(kept.map((item) => [item.row.id, item.truncated])).toEqual([[1, false], [2, false]]);
    expect(cut).toBe(false);
  });

  it('returns an oversized first row truncated rather than nothing', () => {
    const { kept, cut } = fitToBudget([row(1, 500), row(2, 5)], 50);
    expect(kept.map((item) => [item.row.id, item.truncated])).toEqual([[1, true]]);
    expect(cut).toBe(true);
  });
});
