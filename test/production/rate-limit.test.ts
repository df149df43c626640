import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRateLimit, registerRateLimit } from '../../src/http/rate-limit.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ping = { jsonrpc: '2.0', id: 7, method: 'ping', params: {} };

describe.each(engines)('per-subject rate limit on /mcp on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine, env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 429 with Retry-After and a JSON-RPC error past the limit, per subject', async () => {
    const alice = { authorization: `Bearer ${await server.token('rl-alice')}` };
    for (let i = 0; i < 3; i++) {
      const response = await server.post(ping, alice);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const limited = await server.post(ping, alice);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    const body = (await limited.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(/^Rate limit exceeded: at most 3 requests per minute; retry in (\d+) s$/);
    expect(Number(/(\d+) s$/.exec(body.error.message)![1])).toBe(retryAfter);

    // Another subject has its own budget, even with a token of the same client.
    const bob = { authorization: `Bearer ${await server.token('rl-bob')}` };
    expect((await server.post(ping, bob)).status).toBe(200);
    // A second token of the same subject shares alice's.
    expect((await server.post(ping, { authorization: `Bearer ${await server.token('rl-alice')}` })).status).toBe(429);
  });

  it('does not spend a subject budget on requests without a valid token', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await server.post(ping, { authorization: 'Bearer not-a-token' })).status).toBe(401);
    }
    const carol = { authorization: `Bearer ${await server.token('rl-carol')}` };
    expect((await server.post(ping, carol)).status).toBe(200);
  });

  it('leaves the probes alone', async () => {
    for (let i = 0; i < 6; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('rate limit setting', () => {
  it('turns the limit off with 0', async () => {
    const server = await startTestServer({ engine: 'pglite', env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const auth = { authorization: `Bearer ${await server.token('unlimited')}` };
      const statuses = await Promise.all(Array.from({ length: 30 }, () => server.post(ping, auth).then((r) => r.status)));
      expect(new Set(statuses)).toEqual(new Set([200]));
      expect((await server.post(ping, auth)).headers.get('x-ratelimit-limit')).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('defaults to 600 per minute', async () => {
    const server = await startTestServer({ engine: 'pglite' });
    try {
      expect(server.config.http.rateLimitPerMinute).toBe(600);
      const response = await server.post(ping, { authorization: `Bearer ${await server.token('default-limit')}` });
      expect(response.headers.get('x-ratelimit-limit')).toBe('600');
    } finally {
      await server.close();
    }
  });
});

describe('per-address rate limit (for the authorization server)', () => {
  it('limits per client address, believing X-Forwarded-For only from a trusted proxy', async () => {
    for (const trusted of [true, false]) {
      const app = Fastify({ trustProxy: trusted ? ['127.0.0.1'] : false });
      await registerRateLimit(app);
      const limit = addressRateLimit(app, 2, 'login');
      app.post('/authorize', { onRequest: limit }, async () => ({ ok: true }));
      app.post('/token', { onRequest: limit }, async () => ({ ok: true }));
      const from = (address: string) => ({ method: 'POST' as const, remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': address } });
      expect((await app.inject({ ...from('203.0.113.1'), url: '/authorize' })).statusCode).toBe(200);
      expect((await app.inject({ ...from('203.0.113.1'), url: '/token' })).statusCode).toBe(200);
      const third = await app.inject({ ...from('203.0.113.1'), url: '/authorize' });
      expect(third.statusCode).toBe(429);
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      // Another address behind the trusted proxy has its own budget; without trust, the proxy's address is the key.
      const other = await app.inject({ ...from('198.51.100.7'), url: '/token' });
      expect(other.statusCode).toBe(trusted ? 200 : 429);
      await app.close();
    }
  });
});
