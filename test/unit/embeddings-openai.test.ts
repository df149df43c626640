import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { createOpenAIProvider } from '../../src/embeddings/openai-provider.js';
import type { OpenAIProviderOptions } from '../../src/embeddings/openai-provider.js';
import { createEmbeddingProvider } from '../../src/embeddings/create-provider.js';
import { fakeEmbedding, startFakeOpenAIServer } from '../helpers/fake-openai-server.js';
import type { FakeOpenAIServer } from '../helpers/fake-openai-server.js';

const KEY = 'sk-test-9f8e7d6c5b4a39281706abcdef';

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((s, v, i) => s + v * b[i]!, 0);
const norm = (a: readonly number[]): number => Math.sqrt(dot(a, a));

async function embeddingError(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  const serviceError = error as ServiceError;
  expect(serviceError.code).toBe('EMBEDDING_ERROR');
  expect(serviceError.message).not.toContain(KEY);
  expect(JSON.stringify(serviceError, Object.getOwnPropertyNames(serviceError))).not.toContain(KEY);
  return serviceError;
}

describe('OpenAI provider against a fake OpenAI server', () => {
  let server: FakeOpenAIServer;
  const make = (overrides: Partial<OpenAIProviderOptions> = {}) =>
    createOpenAIProvider({ apiKey: KEY, baseUrl: server.url, model: 'text-embedding-3-small', maxRetries: 0, ...overrides });

  beforeAll(async () => {
    server = await startFakeOpenAIServer({ dimensions: 1536 });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.setMode('ok');
  });

  it('embeds texts: known dimension, order, unit length, key sent as Bearer', async () => {
    const provider = make();
    expect(provider.model).toBe('openai:text-embedding-3-small');
    expect(provider.dimensions).toBe(1536);
    const texts = ['the user likes green tea', 'the user has a dog named Rex', 'green tea every morning'];
    const vectors = await provider.embed(texts);
    expect(server.lastAuthorization).toBe(`Bearer ${KEY}`);
    expect(server.lastBody).toMatchObject({ model: 'text-embedding-3-small', encoding_format: 'float', input: texts });
    expect(vectors).toHaveLength(3);
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(1536);
      expect(norm(v)).toBeCloseTo(1, 10);
      const expected = fakeEmbedding(texts[i]!, 1536);
      expect(dot(v, expected) / norm(expected)).toBeCloseTo(1, 10);
    });
    expect(dot(vectors[0]!, vectors[2]!)).toBeGreaterThan(dot(vectors[0]!, vectors[1]!));
    await expect(provider.embed([])).resolves.toEqual([]);
    await provider.close();
  });

  it('orders results by index, not by position in the response', async () => {
    const provider = make();
    await provider.ready();
    server.setMode('shuffled');
    const texts = ['alpha', 'beta', 'gamma', 'delta'];
    const vectors = await provider.embed(texts);
    vectors.forEach((v, i) => {
      const expected = fakeEmbedding(texts[i]!, 1536);
      expect(dot(v, expected) / norm(expected)).toBeCloseTo(1, 10);
    });
  });

  it('sends large inputs in chunks', async () => {
    const provider = make({ maxBatchSize: 10 });
    await provider.ready();
    const before = server.requests;
    const texts = Array.from({ length: 25 }, (_, i) => `fact number ${i}`);
    const vectors = await provider.embed(texts);
    expect(server.requests - before).toBe(3);
    expect(vectors).toHaveLength(25);
    const expected = fakeEmbedding('fact number 24', 1536);
    expect(dot(vectors[24]!, expected) / norm(expected)).toBeCloseTo(1, 10);
  });

  it('discovers the dimension of an unknown model once, in ready()', async () => {
    const small = await startFakeOpenAIServer({ dimensions: 768 });
    try {
      const provider = createOpenAIProvider({ apiKey: undefined, baseUrl: small.url, model: 'nomic-embed-text', maxRetries: 0 });
      expect(provider.model).toBe('openai:nomic-embed-text');
      expect(provider.dimensions).toBe(0);
      await Promise.all([provider.ready(), provider.ready()]);
      expect(provider.dimensions).toBe(768);
      expect(small.requests).toBe(1);
      const vectors = await provider.embed(['a', 'b']);
      expect(vectors.map((v) => v.length)).toEqual([768, 768]);
      expect(small.requests).toBe(2);
      // No key with a custom base URL is allowed: the SDK gets a placeholder.
      expect(small.lastAuthorization).toBe('Bearer unused');
    } finally {
      await small.close();
    }
  });

  it('checks a given dimension for an unknown model', async () => {
    const provider = make({ model: 'my-embedder', dimensions: 1024 });
    expect(provider.dimensions).toBe(1024);
    const error = await embeddingError(provider.ready());
    expect(error.message).toContain('expected 1024 dimensions, got 1536');
  });

  it('fails ready() without a key against the official API, without a request', async () => {
    const provider = createOpenAIProvider({ apiKey: undefined, model: 'text-embedding-3-small' });
    const error = await embeddingError(provider.ready());
    expect(error.message).toContain('OPENAI_API_KEY is not set');
    await embeddingError(provider.embed(['a']));
  });

  it('reports HTTP 401 with the provider message and without the key', async () => {
    const provider = make();
    server.setMode('http401');
    const error = await embeddingError(provider.embed(['a']));
    expect(error.message).toMatch(/HTTP 401/);
    expect(error.message).toContain('Incorrect API key provided');
  });

  it('retries HTTP 500 maxRetries times, then reports it', async () => {
    const provider = make({ maxRetries: 2 });
    server.setMode('http500');
    const before = server.requests;
    const error = await embeddingError(provider.ready());
    expect(server.requests - before).toBe(3);
    expect(error.message).toMatch(/HTTP 500/);
  });

  it('recovers once the server does', async () => {
    const provider = make();
    server.setMode('http500');
    await embeddingError(provider.ready());
    server.setMode('ok');
    await expect(provider.embed(['back again'])).resolves.toHaveLength(1);
  });

  it('honours the timeout', async () => {
    const provider = make({ timeoutMs: 300, maxRetries: 0 });
    server.setMode('hang');
    const started = Date.now();
    const error = await embeddingError(provider.embed(['a']));
    const elapsed = Date.now() - started;
    expect(error.message).toMatch(/did not answer within 300 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('reports a body that is not JSON', async () => {
    const provider = make();
    server.setMode('garbage');
    expect((await embeddingError(provider.embed(['a']))).message).toMatch(/malformed response/);
  });

  it('reports a response without data', async () => {
    const provider = make();
    server.setMode('noData');
    expect((await embeddingError(provider.embed(['a']))).message).toMatch(/malformed response/);
  });

  it('reports non-numeric vectors', async () => {
    const provider = make();
    server.setMode('nonNumeric');
    expect((await embeddingError(provider.embed(['a']))).message).toMatch(/not a finite number/);
  });

  it('reports the wrong number of vectors', async () => {
    const provider = make();
    await provider.ready();
    server.setMode('wrongCount');
    expect((await embeddingError(provider.embed(['a', 'b', 'c']))).message).toContain('2 vectors for 3 inputs');
  });

  it('reports the wrong dimension', async () => {
    const provider = make();
    server.setMode('wrongDims');
    expect((await embeddingError(provider.ready())).message).toContain('expected 1536 dimensions, got 768');
    await provider.close();
  });

  it('reports an unreachable server', async () => {
    const gone = await startFakeOpenAIServer();
    const url = gone.url;
    await gone.close();
    const provider = createOpenAIProvider({ apiKey: KEY, baseUrl: url, model: 'text-embedding-3-small', maxRetries: 0 });
    const error = await embeddingError(provider.embed(['a']));
    expect(error.message).toMatch(/unreachable/);
    expect(error.message).toContain('127.0.0.1');
  });

  it('is built by createEmbeddingProvider for an OpenAI-compatible server', async () => {
    const provider = createEmbeddingProvider({ provider: 'openai', model: 'text-embedding-3-small', dimensions: undefined, baseUrl: server.url, apiKey: KEY, timeoutMs: 10_000, concurrency: 8, queueLimit: 64 });
    await provider.ready();
    expect(provider.dimensions).toBe(1536);
    await expect(provider.embed(['hello'])).resolves.toHaveLength(1);
  });
});
