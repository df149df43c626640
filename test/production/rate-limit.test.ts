import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRateLimit, rateLimit, type RateLimitedError } from '../../src/http/rate-limit.js';
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
      const limit = addressRateLimit(2);
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

describe('fixed one-minute windows', () => {
  it('counts per key, starts a key afresh when its minute is over, and says when to retry', () => {
    let clock = 1_000_000;
    const limit = rateLimit(2, (request) => request.headers['x-key'] as string, () => clock);
    const check = (key: string) => {
      const headers: Record<string, string> = {};
      const reply = { header: (name: string, value: string) => (headers[name] = value) } as unknown as Parameters<typeof limit>[1];
      const refused: RateLimitedError | undefined = limit({ headers: { 'x-key': key } } as unknown as Parameters<typeof limit>[0], reply);
      return { refused, headers };
    };
    expect(check('a').headers['x-ratelimit-remaining']).toBe('1');
    clock += 20_000;
    expect(check('a').headers).toEqual({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '40' });
    clock += 10_500;
    const third = check('a');
    expect(third.refused?.statusCode).toBe(429);
    expect(third.refused?.message).toBe('Rate limit exceeded: at most 2 requests per minute; retry in 30 s');
    expect(third.headers['retry-after']).toBe('30');
    expect(check('b').refused).toBeUndefined();
    clock += 29_500;
    const fresh = check('a');
    expect(fresh.refused).toBeUndefined();
    expect(fresh.headers['x-ratelimit-remaining']).toBe('1');
    expect(fresh.headers['x-ratelimit-reset']).toBe('60');
  });

  it('keeps at most 10,000 keys, dropping the one whose window began longest ago', () => {
    const limit = rateLimit(1, (request) => request.headers['x-key'] as string);
    const reply = { header: () => reply } as unknown as Parameters<typeof limit>[1];
    const hit = (key: string) => limit({ headers: { 'x-key': key } } as unknown as Parameters<typeof limit>[0], reply);
    expect(hit('first')).toBeUndefined();
    expect(hit('first')).toBeDefined();
    for (let i = 0; i < 9_999; i++) hit(`k${i}`);
    // Still 10,000 keys: 'first' is counted.
    expect(hit('first')).toBeDefined();
    hit('one-more');
    // 'first' was dropped, so it starts afresh; a key whose window began later is still counted.
    expect(hit('first')).toBeUndefined();
    expect(hit('k9998')).toBeDefined();
  });
});
