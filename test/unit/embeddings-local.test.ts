import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { createMicroBatcher } from '../../src/embeddings/batcher.js';
import { createLocalProvider } from '../../src/embeddings/local-provider.js';
import type { LocalEmbeddingProvider, LocalModel } from '../../src/embeddings/local-provider.js';
import { createEmbeddingProvider } from '../../src/embeddings/create-provider.js';

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((s, v, i) => s + v * b[i]!, 0);
const norm = (a: readonly number[]): number => Math.sqrt(dot(a, a));

async function expectEmbeddingError(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).code).toBe('EMBEDDING_ERROR');
  return error as ServiceError;
}

describe('local provider (real model)', () => {
  let provider: LocalEmbeddingProvider;

  beforeAll(async () => {
    provider = createLocalProvider();
    await provider.ready();
  });

  afterAll(async () => {
    await provider.close();
  });

  it('names the model and its dimension', () => {
    expect(provider.model).toBe('local:universal-sentence-encoder-lite');
    expect(provider.dimensions).toBe(512);
  });

  it('returns 512-dimensional unit vectors', async () => {
    const vectors = await provider.embed(['The user lives in Lisbon', 'The user has two cats']);
    expect(vectors).toHaveLength(2);
    for (const v of vectors) {
      expect(v).toHaveLength(512);
      expect(v.every((x) => Number.isFinite(x))).toBe(true);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('puts paraphrases closer together than unrelated sentences', async () => {
    const [a, b, c] = await provider.embed([
      "The user's favourite drink is green tea",
      'The user likes drinking green tea best',
      'The project deadline moved to next Friday',
    ]);
    const paraphrase = dot(a!, b!);
    const unrelated = dot(a!, c!);
    expect(paraphrase).toBeGreaterThan(unrelated + 0.2);
  });

  it('is deterministic for identical texts', async () => {
    const [a, b] = await provider.embed(['same text', 'same text']);
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
  });

  it('returns [] for an empty array without calling the model', async () => {
    const before = provider.stats();
    await expect(provider.embed([])).resolves.toEqual([]);
    expect(provider.stats()).toEqual(before);
  });

  it('embeds empty and whitespace-only texts without losing rows', async () => {
    const vectors = await provider.embed(['first', '', 'last', '']);
    expect(vectors).toHaveLength(4);
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    const [single] = await provider.embed(['last']);
    expect(dot(vectors[2]!, single!)).toBeCloseTo(1, 4);
  });

  it('coalesces concurrent calls into one model call and keeps each caller’s order', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `The user owns ${i + 1} houseplants in room number ${i}`);
    const singles = await Promise.all(texts.map((t) => provider.embed([t]).then((v) => v[0]!)));

    const before = provider.stats();
    const results = await Promise.all([
      provider.embed([texts[0]!, texts[1]!, texts[2]!]),
      provider.embed([texts[3]!]),
      provider.embed([texts[4]!, texts[5]!]),
      provider.embed([texts[6]!, texts[7]!, texts[8]!, texts[9]!]),
    ]);
    const after = provider.stats();

    expect(after.batches - before.batches).toBe(1);
    expect(after.texts - before.texts).toBe(10);
    expect(results.map((r) => r.length)).toEqual([3, 1, 2, 4]);
    const flat = results.flat();
    flat.forEach((v, i) => expect(dot(v, singles[i]!)).toBeCloseTo(1, 4));
  });

  it('splits more than 32 concurrent texts into batches of at most 32', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `memory number ${i}`);
    const before = provider.stats();
    const results = await Promise.all(texts.map((t) => provider.embed([t])));
    const after = provider.stats();
    expect(after.texts - before.texts).toBe(70);
    expect(after.batches - before.batches).toBe(3);
    expect(results.every((r) => r.length === 1 && r[0]!.length === 512)).toBe(true);
  });
});

describe('local provider (stub model)', () => {
  const stub = (embed: (texts: string[]) => Promise<number[][]>, counters = { loads: 0 }): (() => Promise<LocalModel>) => {
    return async () => {
      counters.loads++;
      await new Promise((r) => setTimeout(r, 10));
      return { embed };
    };
  };
  const ones = (texts: string[]): Promise<number[][]> => Promise.resolve(texts.map(() => new Array<number>(512).fill(2)));

  it('loads the model once for concurrent ready() and embed() callers', async () => {
    const counters = { loads: 0 };
    const provider = createLocalProvider({ loadModel: stub(ones, counters) });
    await Promise.all([provider.ready(), provider.ready(), provider.embed(['a']), provider.embed(['b'])]);
    await provider.ready();
    expect(counters.loads).toBe(1);
    const [v] = await provider.embed(['x']);
    expect(norm(v!)).toBeCloseTo(1, 10);
    await provider.close();
  });

  it('rejects every caller in a failed batch with EMBEDDING_ERROR', async () => {
    const provider = createLocalProvider({ loadModel: stub(() => Promise.reject(new Error('tensor exploded'))) });
    await provider.ready();
    const settled = await Promise.allSettled([provider.embed(['a']), provider.embed(['b', 'c']), provider.embed(['d'])]);
    for (const result of settled) {
      const error = await expectEmbeddingError(
        result.status === 'rejected' ? Promise.reject(result.reason as Error) : Promise.resolve(result.value),
      );
      expect(error.message).toContain('tensor exploded');
    }
    expect(provider.stats().batches).toBe(1);
  });

  it('rejects vectors of the wrong length or with non-finite values', async () => {
    const short = createLocalProvider({ loadModel: stub((t) => Promise.resolve(t.map(() => [1, 2, 3]))) });
    expect((await expectEmbeddingError(short.embed(['a']))).message).toContain('expected 512 dimensions, got 3');

    const nan = createLocalProvider({
      loadModel: stub((t) => Promise.resolve(t.map(() => new Array<number>(512).fill(Number.NaN)))),
    });
    await expectEmbeddingError(nan.embed(['a']));

    const zero = createLocalProvider({ loadModel: stub((t) => Promise.resolve(t.map(() => new Array<number>(512).fill(0)))) });
    await expectEmbeddingError(zero.embed(['a']));

    const missing = createLocalProvider({ loadModel: stub((t) => Promise.resolve(t.slice(1).map(() => new Array<number>(512).fill(1)))) });
    await expectEmbeddingError(missing.embed(['a', 'b']));
  });

  it('reports a failed load as EMBEDDING_ERROR and retries the load later', async () => {
    let attempts = 0;
    const provider = createLocalProvider({
      loadModel: async () => {
        attempts++;
        if (attempts === 1) throw new Error('weights missing');
        return { embed: ones };
      },
    });
    const error = await expectEmbeddingError(provider.ready());
    expect(error.message).toContain('weights missing');
    await provider.ready();
    await expect(provider.embed(['a'])).resolves.toHaveLength(1);
  });

  it('refuses work after close()', async () => {
    const provider = createLocalProvider({ loadModel: stub(ones) });
    await provider.ready();
    await provider.close();
    await expectEmbeddingError(provider.embed(['a']));
  });
});

describe('micro-batcher', () => {
  it('spreads one large request over several batches and reassembles it in order', async () => {
    const sizes: number[] = [];
    const batcher = createMicroBatcher<number, number>({
      maxBatchSize: 4,
      run: async (items) => {
        sizes.push(items.length);
        return items.map((x) => x * 10);
      },
    });
    const [a, b] = await Promise.all([batcher.submit([1, 2, 3, 4, 5, 6]), batcher.submit([7, 8, 9])]);
    expect(a).toEqual([10, 20, 30, 40, 50, 60]);
    expect(b).toEqual([70, 80, 90]);
    expect(sizes).toEqual([4, 4, 1]);
  });

  it('rejects a caller whose count does not match and drains cleanly', async () => {
    const batcher = createMicroBatcher<number, number>({ maxBatchSize: 8, run: async (items) => items.slice(1) });
    await expect(batcher.submit([1, 2])).rejects.toThrow(/1 results for 2 items/);
    await batcher.drain();
    expect(batcher.queued).toBe(0);
  });
});

describe('createEmbeddingProvider', () => {
  it('builds the local provider', () => {
    const provider = createEmbeddingProvider({ provider: 'local', workers: 1 });
    expect(provider.model).toBe('local:universal-sentence-encoder-lite');
    expect(provider.dimensions).toBe(512);
  });

  it('builds the OpenAI provider with a known model\'s dimension', () => {
    const provider = createEmbeddingProvider({ provider: 'openai', model: 'text-embedding-3-small', dimensions: undefined, baseUrl: undefined, apiKey: 'sk-test', timeoutMs: 10_000, concurrency: 8, queueLimit: 64 });
    expect(provider.model).toBe('openai:text-embedding-3-small');
    expect(provider.dimensions).toBe(1536);
  });
});
