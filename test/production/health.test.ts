import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingError } from '../../src/errors.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { engines } from '../helpers/engines.js';
import { sharedLocalEmbedder } from '../helpers/shared.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The local model, whose readiness the test can take away (as when an OpenAI-compatible server goes down). */
function switchableEmbedder(): EmbeddingProvider & { available: boolean } {
  const real = sharedLocalEmbedder();
  return {
    available: true,
    get model() {
      return real.model;
    },
    get dimensions() {
      return real.dimensions;
    },
    embed: (texts) => real.embed(texts),
    async ready() {
      if (!this.available) throw embeddingError('embedding server unreachable');
    },
    close: async () => undefined,
  };
}

describe.each(engines)('health and readiness on %s', (engine) => {
  let server: TestServer;
  const embedder = switchableEmbedder();

  beforeAll(async () => {
    server = await startTestServer({ engine, embedder });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers /healthz without a token and says nothing else', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with one boolean per check', async () => {
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', checks: { database: true, embeddings: true } });
  });

  it('reports not ready (503) while the embedding provider cannot serve, without saying why', async () => {
    embedder.available = false;
    try {
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(503);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ status: 'not_ready', checks: { database: true, embeddings: false } });
      expect(text).not.toMatch(/unreachable/);
    } finally {
      embedder.available = true;
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('reveals no versions, paths or URLs on either probe', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(`${server.url}${path}`);
      const text = await response.text();
      expect(text).not.toMatch(/\d+\.\d+\.\d+|\/tmp|postgres|pglite|http/i);
      expect(response.headers.get('x-powered-by')).toBeNull();
      expect(response.headers.get('server')).toBeNull();
    }
  });
});

describe.each(engines)('readiness with a broken database on %s', (engine) => {
  it('reports database: false and 503 when the database is unreachable or not migrated', async () => {
    const server = await startTestServer({ engine });
    try {
      if (engine === 'postgres') {
        await server.service.db.close();
      } else {
        // The shared in-memory PGlite stays open for the other tests; forgetting the applied migrations is
        // what an unmigrated database (or a wrong schema) looks like.
        await server.service.db.withAllSubjects('inspecting rows', async (trx) => {
          await sql`delete from kysely_migration`.execute(trx);
        });
      }
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: 'not_ready', checks: { database: false, embeddings: true } });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
