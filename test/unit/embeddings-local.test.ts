import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalProvider, type LocalEmbeddingProvider, type LocalProviderOptions } from '../../src/embeddings/local-provider.js';
import { createEmbeddingProvider, embeddingParallelism } from '../../src/embeddings/create-provider.js';

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

  it('coalesces waiting calls into one model call and keeps each caller’s order', async () => {
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

    // Calls that arrive together share one model call.
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

const FAKE_MODEL = new URL('../helpers/fake-local-model.ts', import.meta.url).href;
/** A text the stand-in model takes `ms` to embed, and as long as a text that costs the real model that much. */
const long = (ms: number, label: string): string => `SLOW ${ms} ${label} ${'word '.repeat(800)}`;
const fake = (mode: string, extra: Partial<LocalProviderOptions> = {}, query = ''): LocalEmbeddingProvider =>
  createLocalProvider({ modelModule: `${FAKE_MODEL}?mode=${mode}${query}`, ...extra });

describe('local provider (stand-in model in its worker threads)', () => {
  const open: LocalEmbeddingProvider[] = [];
  const make = (...args: Parameters<typeof fake>) => {
    const provider = fake(...args);
    open.push(provider);
    return provider;
  };
  afterAll(async () => {
    await Promise.all(open.map((provider) => provider.close()));
  });

  it('rejects every caller in a failed batch with EMBEDDING_ERROR', async () => {
    const provider = make('throws');
    await provider.ready();
    const settled = await Promise.allSettled([provider.embed(['a']), provider.embed(['b', 'c']), provider.embed(['d'])]);
    for (const result of settled) {
      const error = await expectEmbeddingError(result.status === 'rejected' ? Promise.reject(result.reason as Error) : Promise.resolve(result.value));
      expect(error.message).toContain('tensor exploded');
    }
  });

  it('rejects vectors of the wrong length, non-finite, zero or missing', async () => {
    expect((await expectEmbeddingError(make('short').embed(['a']))).message).toContain('expected 512 dimensions, got 3');
    expect((await expectEmbeddingError(make('nan').embed(['a']))).message).toContain('not a finite number');
    expect((await expectEmbeddingError(make('zero').embed(['a']))).message).toContain('zero-length');
    expect((await expectEmbeddingError(make('missing').embed(['a', 'b']))).message).toContain('returned 1 vectors for 2 texts');
  });

  it('reports a failed load as EMBEDDING_ERROR and loads again on the next call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-service-model-'));
    try {
      const provider = make('fail-first-load', {}, `&marker=${encodeURIComponent(join(dir, 'loaded'))}`);
      expect((await expectEmbeddingError(provider.ready())).message).toContain('weights missing');
      await provider.ready();
      await expect(provider.embed(['a'])).resolves.toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces a worker that dies: its texts fail with EMBEDDING_ERROR, the others and later calls are served', async () => {
    const provider = make('ok', { workers: 2 });
    await provider.ready();
    const crashed = provider.embed(['CRASH'], { key: 'a' }).then(() => undefined, (error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = await provider.embed([long(200, 'fine')], { key: 'b' });
    expect(other).toHaveLength(1);
    expect((await expectEmbeddingError(Promise.reject(await crashed))).message).toMatch(/stopped while embedding \(worker exit code 3\)/);
    await expect(provider.embed(['after the crash'], { key: 'a' })).resolves.toHaveLength(1);
    expect(provider.stats().restarts).toBe(1);
  });

  it('keeps one caller on one worker: another caller is served at once while it sends long texts', async () => {
    const provider = make('ok', { workers: 2 });
    await provider.ready();
    const started = Date.now();
    const heavy = Promise.all(Array.from({ length: 5 }, (_, i) => provider.embed([long(300, `text ${i}`)], { key: 'heavy' })));
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const at = Date.now();
      await provider.embed([`short query ${i}`], { key: 'light' });
      latencies.push(Date.now() - at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await heavy;
    // The heavy caller's five texts ran one after another on one worker, never on both.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_450);
    expect(Math.max(...latencies)).toBeLessThan(150);
  });

  it('refuses a caller past its queue limit at once, and others still get in', async () => {
    const provider = make('ok', { workers: 1, maxWaitingPerKey: 2 });
    await provider.ready();
    const first = provider.embed([long(300, 'a')], { key: 'k' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = [provider.embed(['b'], { key: 'k' }), provider.embed(['c'], { key: 'k' })];
    expect((await expectEmbeddingError(provider.embed(['d'], { key: 'k' }))).message).toMatch(/busy with 2 earlier requests/);
    await expect(provider.embed(['e'], { key: 'other' })).resolves.toHaveLength(1);
    await Promise.all([first, ...waiting]);
  });

  /** A thread's nice value, from /proc/<pid>/task/<tid>/stat (field 19; fields counted after the command name). */
  const niceOf = (thread: number): number => {
    const stat = readFileSync(`/proc/${process.pid}/task/${thread}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };
  const onLinux = process.platform === 'linux';

  it.runIf(onLinux)('runs the bulk worker of two at a lower CPU priority, that thread alone', async () => {
    const provider = make('ok', { workers: 2 });
    await provider.ready();
    const workers = provider.stats().workers;
    expect(workers.map((worker) => worker.role)).toEqual(['short', 'bulk']);
    const [short, bulk] = workers.map((worker) => worker.thread!);
    expect(new Set([short, bulk, process.pid]).size).toBe(3);
    const base = getPriority();
    expect(niceOf(process.pid)).toBe(base);
    expect(niceOf(short!)).toBe(base);
    expect(niceOf(bulk!)).toBe(Math.min(19, base + 10));
  });

  it.runIf(onLinux)('keeps a single worker at normal priority: it takes every job', async () => {
    const provider = make('thread', { workers: 1 });
    await provider.ready();
    const [only] = provider.stats().workers;
    expect(only?.role).toBe('short');
    expect(niceOf(only!.thread!)).toBe(getPriority());
    const [vector] = await provider.embed([long(10, 'alone')], { key: 'a' });
    expect(Math.round(vector![0]! / vector![1]!)).toBe(only!.thread);
  });

  it.runIf(onLinux)('sends long texts only to the bulk worker, short ones to the short worker first and to the bulk one when it is busy', async () => {
    const provider = make('thread', { workers: 2 });
    await provider.ready();
    const [short, bulk] = provider.stats().workers.map((worker) => worker.thread!);
    const thread = (vectors: number[][]): number => Math.round(vectors[0]![0]! / vectors[0]![1]!);
    // Queued together: the short worker passes over both long texts and takes c's; the bulk worker takes them in turn.
    const [a, b, c] = await Promise.all([
      provider.embed([long(100, 'a')], { key: 'a' }),
      provider.embed([long(100, 'b')], { key: 'b' }),
      provider.embed(['a short query'], { key: 'c' }),
    ]);
    expect([thread(a), thread(b), thread(c)]).toEqual([bulk, bulk, short]);
    // With the short worker busy, a short text of another key runs on the idle bulk worker rather than wait.
    const d = provider.embed(['SLOW 500 a short but slow text'], { key: 'd' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const e = await provider.embed(['another query'], { key: 'e' });
    expect([thread(await d), thread(e)]).toEqual([short, bulk]);
  });

  it.runIf(onLinux)('with bulkOnly (maintenance), runs long texts of two keys on both workers at once, both at lower priority', async () => {
    const provider = make('thread', { workers: 2, bulkOnly: true });
    await provider.ready();
    const workers = provider.stats().workers;
    expect(workers.map((worker) => worker.role)).toEqual(['bulk', 'bulk']);
    for (const worker of workers) expect(niceOf(worker.thread!)).toBe(Math.min(19, getPriority() + 10));
    const thread = (vectors: number[][]): number => Math.round(vectors[0]![0]! / vectors[0]![1]!);
    const [a, b] = await Promise.all([provider.embed([long(300, 'a')], { key: 'reembed:0' }), provider.embed([long(300, 'b')], { key: 'reembed:1' })]);
    expect(new Set([thread(a), thread(b)])).toEqual(new Set(workers.map((worker) => worker.thread)));
  });

  it('refuses work after close()', async () => {
    const provider = fake('ok');
    await provider.ready();
    await provider.close();
    await expectEmbeddingError(provider.embed(['a']));
  });
});

describe('createEmbeddingProvider', () => {
  it('builds the local provider', async () => {
    const provider = createEmbeddingProvider({ provider: 'local', workers: 1 });
    expect(provider.model).toBe('local:universal-sentence-encoder-lite');
    expect(provider.dimensions).toBe(512);
    await provider.close();
  });

  it('builds the OpenAI provider with a known model\'s dimension', () => {
    const provider = createEmbeddingProvider({ provider: 'openai', model: 'text-embedding-3-small', dimensions: undefined, baseUrl: undefined, apiKey: 'sk-test', timeoutMs: 10_000, concurrency: 8, queueLimit: 64 });
    expect(provider.model).toBe('openai:text-embedding-3-small');
    expect(provider.dimensions).toBe(1536);
  });

  it('says how many calls of different keys each provider serves at once (reembed runs that many batches)', () => {
    expect(embeddingParallelism({ provider: 'local', workers: 3 })).toBe(3);
    expect(embeddingParallelism({ provider: 'openai', model: 'm', dimensions: 8, baseUrl: undefined, apiKey: 'sk-test', timeoutMs: 1_000, concurrency: 5, queueLimit: 64 })).toBe(5);
  });
});
