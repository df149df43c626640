import { describe, expect, it } from 'vitest';
import type { RestatementHit } from '../../src/db/memories/restatement-ranking.js';
import { meaningRetriever, MEANING_SOURCES, RETRIEVER_WEIGHTS, textRetriever, vectorRetriever, type FirstResultTexts } from '../../src/memory/retrievers.js';

/** The retrievers that work on what recall's planner read (vector, full text) and on the first results' texts (meaning). */
const restatement = (memoryId: number, hit: Partial<RestatementHit>): RestatementHit => ({
  memoryId,
  text: 'a restatement',
  truncated: false,
  createdAt: new Date(0),
  distance: undefined,
  memoryDistance: undefined,
  coverage: 0,
  ...hit,
});

describe('the vector retriever', () => {
  it("ranks the nearest memories, with the vector retriever's weight", () => {
    expect(vectorRetriever({ nearest: [4, 2, 9], restatements: [] })).toEqual({ ids: [4, 2, 9], weight: RETRIEVER_WEIGHTS.vector });
  });

  it('puts a memory whose restatement is nearer than its own text at the restatement\'s position, and counts it once', () => {
    const ranking = vectorRetriever({
      nearest: [4, 2, 9],
      // 9's restatement is the nearest of the restatements; 2's is farther than 2's own text, so it does not count.
      restatements: [restatement(9, { distance: 0.1, memoryDistance: 0.5 }), restatement(2, { distance: 0.6, memoryDistance: 0.3 })],
    });
    // Own positions 0, 2, 4 (4, 2, 9); restated positions 1, 3, … (9 at 1): 9 moves up to second, once.
    expect(ranking.ids).toEqual([4, 9, 2]);
  });

  it('ranks a restatement of another model (no distance) nowhere', () => {
    expect(vectorRetriever({ nearest: [1], restatements: [restatement(7, { coverage: 1 })] }).ids).toEqual([1]);
  });
});

describe('the full-text retriever', () => {
  it('weighs each hit by how much of the question it covers: fully from 0.4 up, in proportion below', () => {
    const ranking = textRetriever({
      worded: [
        { id: 1, score: 3, coverage: 0.9 },
        { id: 2, score: 2, coverage: 0.2 },
        { id: 3, score: 1, coverage: 0 },
      ],
      restatements: [],
    });
    expect(ranking).toEqual({ ids: [1, 2, 3], weight: RETRIEVER_WEIGHTS.text, confidence: [1, 0.5, 0] });
  });

  it('counts a memory once, at its better position and its better coverage, own text or restatement', () => {
    const ranking = textRetriever({
      worded: [
        { id: 1, score: 3, coverage: 0.3 },
        { id: 2, score: 2, coverage: 0.2 },
      ],
      restatements: [restatement(2, { coverage: 1 }), restatement(5, { coverage: 0.1 }), restatement(6, { coverage: 0 })],
    });
    // Own 1 at 0, 2 at 2; restated 2 at 1, 5 at 3; 6 matched no word.
    expect(ranking.ids).toEqual([1, 2, 5]);
    expect(ranking.confidence).toEqual([expect.closeTo(0.75), 1, expect.closeTo(0.25)]);
  });
});

describe('the meaning retriever', () => {
  const texts =
    (...written: string[]): FirstResultTexts =>
    async (count) =>
      written.slice(0, count).map((text, index) => ({ id: index + 1, text }));

  it('ranks, in their order, the first results naming a kind of a word no memory uses, at its small weight', async () => {
    const ranking = await meaningRetriever(['herb'], texts('The user grows tomatoes.', 'The user cannot stand coriander.', 'The user loves basil in pasta.'));
    expect(ranking).toEqual({ ids: [2, 3], weight: RETRIEVER_WEIGHTS.meaning });
  });

  it(`reads only the first ${MEANING_SOURCES} results`, async () => {
    const many = [...Array.from({ length: MEANING_SOURCES }, () => 'The user grows tomatoes.'), 'The user cannot stand coriander.'];
    expect(await meaningRetriever(['herb'], texts(...many))).toBeUndefined();
  });

  it('says nothing when every word of the question is used, or nothing bridges', async () => {
    let read = 0;
    const counted: FirstResultTexts = async (count) => {
      read += count;
      return [];
    };
    expect(await meaningRetriever([], counted)).toBeUndefined();
    expect(read).toBe(0);
    expect(await meaningRetriever(['herb'], texts('The user grows tomatoes.'))).toBeUndefined();
  });
});
