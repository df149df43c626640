import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingError } from '../../src/errors.js';
import { engines } from '../helpers/engines.js';
import { embedderFailingWhen } from '../helpers/shared.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';

const METRICS_TOKEN = 'metrics-test-token-0123456789';
const rpc = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params });

/** The value of one sample line, e.g. `memory_service_tool_calls_total{tool="remember",outcome="ok"}`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0]!;
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

describe.each(engines)('Prometheus metrics on %s', (engine) => {
  let server: TestServer;
  let token: string;
  let failEmbedding = false;

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      env: { MEMORY_SERVICE_METRICS_TOKEN: METRICS_TOKEN },
      // The local model, made to fail on demand like an unreachable OpenAI-compatible server.
      embedder: embedderFailingWhen(() => (failEmbedding ? embeddingError('embedding server unreachable') : undefined)),
    });
    token = await server.token('metrics-user');
  });
  afterAll(async () => {
    await server.close();
  });

  const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }) =>
    fetch(`${server.url}/metrics`, { headers });

  it('refuses /metrics without the metrics token, and with a user access token', async () => {
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await scrape({ authorization: `Bearer ${token}` })).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts JSON-RPC requests and latency per method', async () => {
    const auth = { authorization: `Bearer ${token}` };
    for (const method of ['ping', 'ping', 'tools/list', 'no/such-method']) await server.post(rpc(method), auth);
    const text = await (await scrape()).text();
    expect(sample(text, 'memory_service_jsonrpc_requests_total', { method: 'ping', outcome: 'ok' })).toBe(2);
    expect(sample(text, 'memory_service_jsonrpc_requests_total', { method: 'tools/list', outcome: 'ok' })).toBe(1);
    // Unknown methods share one label, so clients cannot create series at will.
    expect(sample(text, 'memory_service_jsonrpc_requests_total', { method: 'other', outcome: 'error' })).toBe(1);
    expect(text).not.toContain('no/such-method');
    expect(sample(text, 'memory_service_jsonrpc_request_duration_seconds_count', { method: 'ping' })).toBe(2);
    expect(sample(text, 'memory_service_http_requests_total', { route: '/mcp', status: '200' })).toBeGreaterThanOrEqual(4);
  });

  it('counts tool calls by outcome, including tool error codes, and never records memory text', async () => {
    const secretish = 'The user keeps a spare key under the blue flowerpot';
    expect((await server.call(token, 'remember', { text: secretish })).isError).toBe(false);
    expect((await server.call(token, 'remember', { text: '' })).structured).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    expect((await server.call(token, 'recall', { query: 'where is the spare key' })).isError).toBe(false);
    failEmbedding = true;
    try {
      expect((await server.call(token, 'remember', { text: 'The user likes tea' })).structured).toMatchObject({ error: { code: 'EMBEDDING_ERROR' } });
    } finally {
      failEmbedding = false;
    }
    const text = await (await scrape()).text();
    expect(sample(text, 'memory_service_tool_calls_total', { tool: 'remember', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'memory_service_tool_calls_total', { tool: 'remember', outcome: 'INVALID_INPUT' })).toBe(1);
    expect(sample(text, 'memory_service_tool_calls_total', { tool: 'remember', outcome: 'EMBEDDING_ERROR' })).toBe(1);
    expect(sample(text, 'memory_service_tool_calls_total', { tool: 'recall', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'memory_service_tool_call_duration_seconds_count', { tool: 'remember' })).toBe(3);
    expect(sample(text, 'memory_service_embedding_failures_total')).toBe(1);
    expect(sample(text, 'memory_service_embedding_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'memory_service_embedding_texts_total')).toBeGreaterThanOrEqual(3);
    expect(text).not.toContain('flowerpot');
    expect(text).not.toContain(token);
  });

  it('reports database pool use and process figures', async () => {
    const text = await (await scrape()).text();
    expect(sample(text, 'memory_service_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'memory_service_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });
});

describe('metrics listeners', () => {
  it('serves no /metrics on the main listener when no metrics token is set', async () => {
    const server = await startTestServer({ engine: 'pglite' });
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      expect(server.service.metricsApp).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('serves /metrics unauthenticated on a separate listener (MetricsPort), and only /metrics there', async () => {
    const metricsPort = await freePort();
    const server = await startTestServer({ engine: 'pglite', env: { MEMORY_SERVICE_METRICS_PORT: String(metricsPort) } });
    try {
      await server.service.metricsApp!.listen({ host: server.config.metrics.host, port: metricsPort });
      await fetch(`${server.url}/healthz`);
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(response.status).toBe(200);
      expect(sample(await response.text(), 'memory_service_http_requests_total', { route: '/healthz', status: '200' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/mcp`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
