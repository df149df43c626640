import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** POST /mcp with an exact Host header (fetch would not send the one given). */
function postWithHost(port: number, host: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host, 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(engines)('DNS-rebinding protection on a loopback listener on %s', (engine) => {
  let server: TestServer;
  let auth: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    auth = { authorization: `Bearer ${await server.token('rebinding')}` };
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses a Host that is neither BaseUrl nor a loopback name on this port, even with a valid token', async () => {
    const port = server.config.port;
    for (const host of ['evil.example.com', `evil.example.com:${port}`, `localhost:${port + 1}`, `127.0.0.2:${port}`, 'localhost']) {
      const response = await postWithHost(port, host, auth);
      expect(response.status, host).toBe(403);
      expect(JSON.parse(response.body)).toMatchObject({ error: { message: 'Forbidden: Host not allowed' } });
    }
  });

  it('refuses it before authentication, so a rebinding page learns nothing from the challenge', async () => {
    const response = await postWithHost(server.config.port, 'evil.example.com', {});
    expect(response.status).toBe(403);
  });

  it("accepts BaseUrl's host name without its port, as nginx's `$host` passes it", async () => {
    const server = await startTestServer({ engine, env: { MEMORY_SERVICE_BASE_URL: 'https://memory.example.com:8443' } });
    try {
      const auth = { authorization: `Bearer ${await server.token('proxied')}` };
      for (const host of ['memory.example.com', 'memory.example.com:8443', 'MEMORY.example.com']) {
        expect((await postWithHost(server.config.port, host, auth)).status, host).toBe(200);
      }
      for (const host of ['memory.example.com:9443', 'memory.example.com.evil.example', 'evil.example.com']) {
        expect((await postWithHost(server.config.port, host, auth)).status, host).toBe(403);
      }
    } finally {
      await server.close();
    }
  });

  it('accepts loopback names with the right port and BaseUrl host', async () => {
    const port = server.config.port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`, new URL(server.url).host]) {
      expect((await postWithHost(port, host, auth)).status, host).toBe(200);
    }
  });
});

describe('a listener on all interfaces', () => {
  it('leaves Host to the network or reverse proxy in front of it', async () => {
    const server = await startTestServer({ engine: 'pglite', env: { MEMORY_SERVICE_HOST: '0.0.0.0', MEMORY_SERVICE_BASE_URL: 'https://memory.example.com' } });
    try {
      const auth = { authorization: `Bearer ${await server.token('anywhere')}` };
      expect((await postWithHost(server.config.port, 'memory.internal:8080', auth)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
