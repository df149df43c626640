import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startFakeOpenAIServer, type FakeOpenAIMode, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The OpenAI-compatible embedding server failing in every way a server can while the service runs: down,
 * hanging, 500, 429 with a short or a long Retry-After, malformed bodies. Each remember answers EMBEDDING_ERROR
 * within the deadline (EmbeddingTimeoutMs) and stores nothing; a hanging provider holds at most
 * EmbeddingConcurrency requests and EmbeddingQueueLimit waiting callers, the rest are told at once; repeated
 * failures open the circuit (fail fast, /readyz not ready) until a probe succeeds.
 */
const TIMEOUT_MS = 1_500;
const BOUND_MS = TIMEOUT_MS + 1_000;

describe.each(engines)('the embedding provider failing on %s', (engine) => {
  let openai: FakeOpenAIServer;
  let server: TestServer;
  let tokens: string[];

  beforeAll(async () => {
    openai = await startFakeOpenAIServer({ dimensions: 64 });
    server = await startTestServer({
      engine,
      embedder: 'from-config',
      env: {
        MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai',
        MEMORY_SERVICE_EMBEDDING_MODEL: 'compatible-model',
        MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '64',
        MEMORY_SERVICE_OPENAI_BASE_URL: openai.url,
        MEMORY_SERVICE_EMBEDDING_TIMEOUT_MS: String(TIMEOUT_MS),
        MEMORY_SERVICE_EMBEDDING_CONCURRENCY: '2',
        MEMORY_SERVICE_EMBEDDING_QUEUE_LIMIT: '2',
      },
    });
    tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => server.token(`user-${i}`)));
  });
  afterAll(async () => {
    await server?.close();
    await openai?.close();
  });

  const stored = async (): Promise<number> => {
    let total = 0;
    for (let i = 0; i < tokens.length; i++) {
      total += await server.service.db.withSubject(`user-${i}`, 'counting', async (trx) =>
        Number((await trx.selectFrom('memories').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
      );
    }
    return total;
  };

  const remember = async (text: string, token = tokens[0]!) => {
    const started = Date.now();
    const { isError, structured } = await server.call(token, 'remember', { text });
    return { isError, structured, error: structured.error as { code: string; message: string } | undefined, elapsed: Date.now() - started };
  };

  /** The provider works again; one success also resets the breaker's count of failures in a row. */
  const healthy = async () => {
    openai.setMode('ok');
    const { isError } = await remember(`The user is fine at ${Date.now()}`);
    expect(isError).toBe(false);
  };

  it('answers EMBEDDING_ERROR at once while the provider is down, and serves again when it is up', async () => {
    await healthy();
    const before = await stored();
    await openai.down();
    try {
      const answer = await remember('The user likes quiet trains');
      expect(answer.error).toMatchObject({ code: 'EMBEDDING_ERROR', message: expect.stringMatching(/unreachable \(ECONNREFUSED\)/) });
      expect(answer.elapsed).toBeLessThan(BOUND_MS);
    } finally {
      await openai.up();
    }
    expect(await stored()).toBe(before);
    await healthy();
  });

  it.each([
    ['hang', /did not answer within 1500 ms/],
    ['http500', /HTTP 500/],
    ['garbage', /malformed response \(not JSON\)/],
    ['truncated', /./],
    ['noData', /no data array/],
    ['nonNumeric', /not an array of numbers|not a finite number/],
    ['wrongDims', /expected 64 dimensions, got 32/],
  ] as const)('answers EMBEDDING_ERROR within the deadline when the provider answers %s, storing nothing', async (mode: FakeOpenAIMode, message) => {
    const before = await stored();
    openai.setMode(mode);
    const answer = await remember(`The user likes ${mode} weather`);
    expect(answer.error).toMatchObject({ code: 'EMBEDDING_ERROR', message: expect.stringMatching(message) });
    expect(answer.elapsed).toBeLessThan(BOUND_MS);
    expect(await stored()).toBe(before);
    await healthy();
  });

  it('retries a 429 whose Retry-After fits the deadline, and says when to come back when it does not', async () => {
    openai.setRetryAfter(1);
    openai.setMode('http429', 1);
    const requests = openai.requests;
    const short = await remember('The user waits one second');
    expect(short.isError).toBe(false);
    expect(openai.requests - requests).toBe(2);
    expect(short.elapsed).toBeGreaterThanOrEqual(900);

    const before = await stored();
    openai.setRetryAfter(60);
    openai.setMode('http429');
    const long = await remember('The user waits a minute');
    expect(long.error).toMatchObject({ code: 'EMBEDDING_ERROR', message: expect.stringMatching(/rate limiting requests \(HTTP 429\); retry in 60 s/) });
    expect(long.elapsed).toBeLessThan(1_000);
    expect(await stored()).toBe(before);
    await healthy();
  });

  it('holds at most EmbeddingConcurrency requests on a hanging provider and refuses callers past the queue at once', async () => {
    const before = await stored();
    openai.setMode('hang');
    openai.resetMaxInFlight();
    const answers = await Promise.all(tokens.map((token, i) => remember(`The user ${i} waits in line`, token)));
    expect(openai.maxInFlight).toBeLessThanOrEqual(2);
    for (const answer of answers) {
      expect(answer.error?.code).toBe('EMBEDDING_ERROR');
      expect(answer.elapsed).toBeLessThan(BOUND_MS);
    }
    const busy = answers.filter((answer) => /is busy: 2 requests in flight and 2 waiting/.test(answer.error!.message));
    expect(busy).toHaveLength(tokens.length - 4);
    for (const answer of busy) expect(answer.elapsed).toBeLessThan(500);
    expect(await stored()).toBe(before);
    await healthy();
  });

  it('fails fast after repeated failures, reports not ready, and closes again once a probe succeeds', async () => {
    openai.setMode('http500');
    for (let i = 0; i < 5; i++) expect((await remember(`The user fails ${i}`)).error?.code).toBe('EMBEDDING_ERROR');
    const requests = openai.requests;
    const fast = await remember('The user is refused at once');
    expect(fast.error).toMatchObject({ code: 'EMBEDDING_ERROR', message: expect.stringMatching(/is failing \(5 failed requests in a row\); not asking it again for \d+ s/) });
    expect(fast.elapsed).toBeLessThan(200);
    expect(openai.requests).toBe(requests);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { database: true, embeddings: false } });

    openai.setMode('ok');
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    expect((await remember('The user is served again')).isError).toBe(false);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
