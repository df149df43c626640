import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../../src/embeddings/openai-provider.js';
import { reembedAll } from '../../src/memory/reembed.js';
import { engines } from '../helpers/engines.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const API_KEY = 'sk-test-0123456789abcdefghijklmnopqrstuv';

describe.each(engines)('remember with OpenAI-compatible embeddings on %s', (engine) => {
  let openai: FakeOpenAIServer;
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    openai = await startFakeOpenAIServer({ dimensions: 1536 });
    server = await startTestServer({
      engine,
      embedder: 'from-config',
      env: {
        MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai',
        MEMORY_SERVICE_OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: API_KEY,
      },
    });
    token = await server.token('carol');
  });
  afterAll(async () => {
    await server?.close();
    await openai?.close();
  });

  const count = () =>
    server.service.db.withSubject('carol', 'inspecting rows', async (trx) =>
      (await trx.selectFrom('memories').select(['embedding_model', 'embedding_dimensions']).execute()),
    );

  it('embeds through the provider with the key from OPENAI_API_KEY', async () => {
    openai.setMode('ok');
    const { isError, structured } = await server.call(token, 'remember', { text: 'The user prefers window seats on flights' });
    expect(isError).toBe(false);
    expect(structured.ok).toBe(true);
    expect(openai.lastAuthorization).toBe(`Bearer ${API_KEY}`);
    expect(await count()).toEqual([{ embedding_model: 'openai:text-embedding-3-small', embedding_dimensions: 1536 }]);
  });

  it.each([
    ['http500', /HTTP 500/],
    ['http401', /HTTP 401/],
    ['garbage', /./],
    ['wrongDims', /dimensions/],
    ['wrongCount', /./],
  ] as const)('reports a provider failure (%s) as EMBEDDING_ERROR and stores nothing', async (mode, message) => {
    const before = (await count()).length;
    openai.setMode(mode);
    try {
      const { isError, structured } = await server.call(token, 'remember', { text: `The user likes ${mode} weather` });
      expect(isError).toBe(true);
      const error = structured.error as { code: string; message: string };
      expect(error.code).toBe('EMBEDDING_ERROR');
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(API_KEY);
    } finally {
      openai.setMode('ok');
    }
    expect(await count()).toHaveLength(before);
  });

  it('re-embeds every memory with a new model, so vectors of different models never mix', async () => {
    const target = await startFakeOpenAIServer({ dimensions: 256 });
    try {
      const provider = createOpenAIProvider({ apiKey: 'sk-other', baseUrl: target.url, model: 'local-compatible-model', dimensions: 256 });
      await provider.ready();
      const progress: string[] = [];
      const counts = await reembedAll(server.service.db, provider, { batchSize: 2, streams: 2 }, ({ table, done, total }) => progress.push(`${table} ${done}/${total}`));
      const stored = await count();
      expect(counts.memories).toBe(stored.length);
      expect(progress.at(-1)).toBe(`memories ${stored.length}/${stored.length}`);
      expect(stored.every((row) => row.embedding_model === 'openai:local-compatible-model' && row.embedding_dimensions === 256)).toBe(true);
      // A second run has nothing left to do.
      expect(await reembedAll(server.service.db, provider, { batchSize: 2, streams: 2 }, () => undefined)).toEqual({ memories: 0, tombstones: 0, restatements: 0 });
    } finally {
      await target.close();
    }
  });
});
