import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, requestLogger } from '../../src/logger.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; remoteAddress?: string };
  rpc?: { method: string; tool?: string };
  res?: { statusCode: number };
  responseTime?: number;
  err?: Record<string, unknown>;
}

/** A real pino logger writing JSON lines into memory. */
function captureLogs(): { logger: ReturnType<typeof createLogger>; raw: () => string; lines: () => LogLine[] } {
  const chunks: string[] = [];
  const logger = createLogger('debug', { write: (chunk: string) => void chunks.push(chunk) });
  return {
    logger,
    raw: () => chunks.join(''),
    lines: () => chunks.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as LogLine),
  };
}

describe.each(engines)('structured logs on %s', (engine) => {
  let server: TestServer;
  const logs = captureLogs();

  beforeAll(async () => {
    server = await startTestServer({ engine, logger: logs.logger });
  });
  afterAll(async () => {
    await server.close();
  });

  it('writes JSON lines with a request id, never the token, the Authorization header or memory text', async () => {
    const token = await server.token('log-user');
    const memoryText = 'The user hides the spare house key inside the hollow garden gnome named Bartholomew';
    const result = await server.call(token, 'remember', { text: memoryText, tags: ['gnome-secret-tag'] });
    expect(result.isError).toBe(false);
    const recalled = await server.call(token, 'recall', { query: 'where is the hollow garden gnome key' });
    expect(recalled.isError).toBe(false);
    const refused = await server.post(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: { text: memoryText } } },
      { authorization: 'Bearer sk-live-verysecretlookingvalue0123456789abcdef' },
    );
    expect(refused.status).toBe(401);

    const raw = logs.raw();
    const lines = logs.lines();
    // One line per request: remember, recall, the refused call.
    const completed = lines.filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(3);
    expect(completed.map((line) => line.res?.statusCode)).toEqual(expect.arrayContaining([200, 401]));
    for (const line of lines.filter((l) => l.req !== undefined || l.res !== undefined)) expect(line.reqId).toMatch(/\S/);
    // The access line names the JSON-RPC method and the tool.
    expect(completed.filter((line) => line.rpc?.tool === 'remember').map((line) => line.res?.statusCode)).toEqual([200]);
    expect(completed.find((line) => line.rpc?.tool === 'recall')?.rpc).toEqual({ method: 'tools/call', tool: 'recall' });

    for (const forbidden of [token, token.split('.')[1]!, 'sk-live-verysecretlookingvalue', 'Bartholomew', 'hollow garden gnome', 'gnome-secret-tag', 'spare house key']) {
      expect(raw).not.toContain(forbidden);
    }
    expect(raw.toLowerCase()).not.toContain('authorization');
  });

  it('keeps a sane incoming X-Request-Id, echoes it, and replaces one that is not', async () => {
    const token = await server.token('log-user');
    const kept = await server.post({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} }, { authorization: `Bearer ${token}`, 'x-request-id': 'edge-7f3a.42' });
    expect(kept.headers.get('x-request-id')).toBe('edge-7f3a.42');
    // One line per request, written when it completes, with everything an operator joins logs on.
    const lines = logs.lines().filter((line) => line.reqId === 'edge-7f3a.42');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        req: { method: 'POST', url: '/mcp', remoteAddress: '127.0.0.1' },
        rpc: { method: 'ping' },
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
      }),
    ]);

    for (const bad of ['has spaces in it', 'x'.repeat(200), 'line\\nbreak', '<script>']) {
      const replaced = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': bad } });
      const id = replaced.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(logs.raw()).not.toContain(bad);
    }
    const generated = (await fetch(`${server.url}/healthz`)).headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs the path of a request without its query string, and no line of its own for an unknown route', async () => {
    const response = await fetch(`${server.url}/oauth/nowhere?code=sekrit-code-4711&state=abc`, { headers: { 'x-request-id': 'with-query' } });
    expect(response.status).toBe(404);
    expect(logs.lines().filter((line) => line.reqId === 'with-query').map((line) => [line.msg, line.req?.url, line.res?.statusCode])).toEqual([
      ['request completed', '/oauth/nowhere', 404],
    ]);
    expect(logs.raw()).not.toContain('sekrit-code-4711');
  });

  it('logs the address the request came from, ignoring X-Forwarded-For from an untrusted peer', async () => {
    const response = await fetch(`${server.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'untrusted-peer' } });
    expect(response.status).toBe(200);
    const line = logs.lines().find((l) => l.reqId === 'untrusted-peer' && l.req !== undefined);
    expect(line?.req?.remoteAddress).toBe('127.0.0.1');
  });
});

describe('credentials on errors', () => {
  it('redacts a token, password or Authorization header that a library put on an error', () => {
    const logs = captureLogs();
    const error = Object.assign(new Error('upstream refused'), {
      token: 'tok-sekrit-0001',
      password: 'pw-sekrit-0002',
      request: { authorization: 'Bearer hdr-sekrit-0003', token: 'tok-sekrit-0004' },
    });
    logs.logger.error({ err: error }, 'call failed');
    const [line] = logs.lines();
    expect(line?.err).toMatchObject({ message: 'upstream refused', token: '[redacted]', password: '[redacted]', request: { authorization: '[redacted]', token: '[redacted]' } });
    for (const secret of ['tok-sekrit-0001', 'pw-sekrit-0002', 'hdr-sekrit-0003', 'tok-sekrit-0004']) expect(logs.raw()).not.toContain(secret);
  });
});

describe('behind a reverse proxy', () => {
  const logs = captureLogs();
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      engine: 'pglite',
      logger: logs.logger,
      env: { MEMORY_SERVICE_BASE_URL: 'https://memory.example.com', MEMORY_SERVICE_TRUST_PROXY: '127.0.0.1/8, ::1' },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  const local = (path: string) => `http://127.0.0.1:${server.config.port}${path}`;

  it('takes the client address from X-Forwarded-For sent by a trusted proxy', async () => {
    await fetch(local('/healthz'), { headers: { 'x-forwarded-for': '203.0.113.9, 127.0.0.1', 'x-request-id': 'via-proxy' } });
    const line = logs.lines().find((l) => l.reqId === 'via-proxy' && l.req !== undefined);
    expect(line?.req?.remoteAddress).toBe('203.0.113.9');
  });

  it('names BaseUrl, never forwarded host or scheme, in challenges and metadata', async () => {
    const forwarded = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };
    const unauthenticated = await fetch(local('/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forwarded },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://memory.example.com/.well-known/oauth-protected-resource/mcp"',
    );
    const metadata = (await (await fetch(local('/.well-known/oauth-protected-resource/mcp'), { headers: forwarded })).json()) as {
      resource: string;
      authorization_servers: string[];
    };
    expect(metadata.resource).toBe('https://memory.example.com/mcp');
    expect(metadata.authorization_servers).toEqual(['https://memory.example.com']);
    expect(JSON.stringify(metadata)).not.toContain('evil.example');
  });

  it('accepts tokens issued for the public URL', async () => {
    const token = await server.token('proxied-user');
    const response = await fetch(local('/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} }),
    });
    expect(response.status).toBe(200);
  });
});

describe("a request's logger", () => {
  it('writes what a pino child of the request id writes, headers and error secrets redacted at every depth', () => {
    const logs = captureLogs();
    const line = {
      headers: { cookie: 'c1', authorization: 'Bearer a1' },
      options: { headers: { cookie: 'c2', 'set-cookie': ['s2'] } },
      deeper: { busboy: { headers: { cookie: 'c3' } } },
      err: { token: 't1', request: { authorization: 'Bearer a2' } },
    };
    const id = 'edge-7f3a.42"\\';
    requestLogger(logs.logger, { reqId: id }, {}).info(line, 'one');
    logs.logger.child({ reqId: id }).info(line, 'one');
    // A level for the request (a route's logLevel) goes through pino's own child.
    requestLogger(logs.logger, { reqId: id }, { level: 'warn' }).info(line, 'not written');
    const [ours, pinos, ...rest] = logs.raw().split('\n').filter((text) => text !== '');
    expect(rest).toEqual([]);
    expect(ours!.replace(/"time":\d+/, '')).toBe(pinos!.replace(/"time":\d+/, ''));
    expect(JSON.parse(ours!)).toMatchObject({
      reqId: id,
      headers: { cookie: '[redacted]', authorization: '[redacted]' },
      options: { headers: { cookie: '[redacted]', 'set-cookie': '[redacted]' } },
      deeper: { busboy: { headers: { cookie: '[redacted]' } } },
      err: { token: '[redacted]', request: { authorization: '[redacted]' } },
    });
    for (const secret of ['c1', 'c2', 'c3', 's2', 'a1', 'a2', 't1']) expect(ours).not.toContain(`"${secret}`);
  });
});
