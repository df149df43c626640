import { describe, expect, it } from 'vitest';
import { embedMemoryTexts, embedTombstoneTexts, MAX_PASSAGES, passagesOf } from '../../src/memory/passages.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';

describe('passagesOf', () => {
  it('has no passages for a text of one sentence', () => {
    expect(passagesOf('The user lives in Leeds.')).toEqual([]);
    expect(passagesOf('The user wears glasses for distance; their prescription is -2.25 in both eyes.')).toEqual([]);
    expect(passagesOf("The user's GP is Dr. Helen Marsh at Chapel Allerton Surgery.")).toEqual([]);
    expect(passagesOf('   ')).toEqual([]);
  });

  it('splits sentences, keeping abbreviations and initials inside theirs', () => {
    expect(passagesOf('The user reads science fiction. Their favourite author is Ursula K. Le Guin! Mrs. Ellis lent them the books.')).toEqual([
      'The user reads science fiction.',
      'Their favourite author is Ursula K. Le Guin!',
      'Mrs. Ellis lent them the books.',
    ]);
  });

  it('says a leading label with every sentence', () => {
    expect(passagesOf('Caroline: Hey Mel! I went to a LGBTQ support group yesterday.')).toEqual([
      'Caroline: Hey Mel!',
      'Caroline: I went to a LGBTQ support group yesterday.',
    ]);
    expect(passagesOf('Time: 10:30 on Friday.')).toEqual([]);
  });

  it(`groups the sentences of a long text, in order, into at most ${MAX_PASSAGES} passages`, () => {
    const sentences = Array.from({ length: 40 }, (_, index) => `Sentence number ${index + 1} is here.`);
    const passages = passagesOf(sentences.join(' '));
    expect(passages).toHaveLength(MAX_PASSAGES);
    expect(passages.join(' ')).toBe(sentences.join(' '));
  });
});

describe('embedMemoryTexts', () => {
  const calls: string[][] = [];
  const embedder: EmbeddingProvider = {
    model: 'm',
    dimensions: 2,
    embed: async (texts) => {
      calls.push([...texts]);
      return texts.map((text) => [text.length, 1]);
    },
    ready: async () => {},
    close: async () => {},
  };
  const unit = (vector: readonly number[]) => vector.map((value) => value / Math.hypot(...vector));

  it('embeds a text of one passage whole, and one of several by its passages only, in one call', async () => {
    calls.length = 0;
    const [one, two] = await embedMemoryTexts(embedder, ['Short.', 'First part. Second, longer part.'], 'alice');
    expect(calls).toEqual([['Short.', 'First part.', 'Second, longer part.']]);
    expect(one).toEqual({ whole: expect.objectContaining({ values: [6, 1], model: 'm' }), passages: [] });
    expect(two!.passages.map((passage) => passage.values)).toEqual([[11, 1], [20, 1]]);
    // The whole vector: the mean of the passages' directions, as a unit vector.
    const [first, second] = [unit([11, 1]), unit([20, 1])];
    const expected = unit([first[0]! + second[0]!, first[1]! + second[1]!]);
    expect(two!.whole.values[0]).toBeCloseTo(expected[0]!, 12);
    expect(two!.whole.values[1]).toBeCloseTo(expected[1]!, 12);
    expect(two!.whole.model).toBe('m');
  });

  it('gives a tombstone the whole vector a memory of the same text gets, and no passages', async () => {
    const texts = ['Short.', 'First part. Second, longer part.'];
    const memories = await embedMemoryTexts(embedder, texts);
    const tombstones = await embedTombstoneTexts(embedder, texts);
    expect(tombstones.map((vectors) => vectors.whole)).toEqual(memories.map((vectors) => vectors.whole));
    expect(tombstones.every((vectors) => vectors.passages.length === 0)).toBe(true);
  });
});
