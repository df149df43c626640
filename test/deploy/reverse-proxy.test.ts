import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { createLogger } from '../../src/logger.js';
import { authorizeInFreshBrowser, browserSkipReason, startCallbackServer, type CallbackServer } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { chromiumArgsFor, makeTestTls, nginxSkipReason, PUBLIC_NAME, publicNameToLoopback, startReadmeProxy, type Nginx, type TestTls } from '../helpers/nginx.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { MemoryOAuthProvider } from '../oauth/memory-oauth-provider.js';
import { authorizationUrl, pkce, registerClient } from '../oauth/oauth-client.js';

const skip = nginxSkipReason() ?? browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE = { username: 'alice', password: 'correct horse battery staple' };
/** Server mode, as in production: PostgreSQL when the suite has one. */
const engine = engines.at(-1)!;

type Fetch = typeof fetch;

/**
 * The service behind Debian's nginx, configured with docs/deployment.md's server block, TLS from a CA made for the
 * test, and a public https BaseUrl on a non-default port. Every client reaches it by name through nginx.
 */
describe.skipIf(skip !== undefined)(`behind nginx with TLS, the documented configuration (${engine})`, () => {
  let dir: string;
  let tls: TestTls;
  let nginx: Nginx;
  let server: TestServer;
  let callbacks: CallbackServer;
  let baseUrl: string;
  let aliceId: string;
  const serviceLog: Record<string, unknown>[] = [];
  const agents: Agent[] = [];

  /** fetch over TLS trusting the test CA, from a chosen local address (nginx sees it as the client's). */
  const httpsFetch = (localAddress = '127.0.0.1'): Fetch => {
    const agent = new Agent({ localAddress, connect: { ca: tls.caPem, lookup: publicNameToLoopback as never } });
    agents.push(agent);
    return ((input: string | URL | Request, init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher: agent })) as unknown as Fetch;
  };

  /** The service's log lines for one request id (pino JSON, as on stdout). */
  const logFor = (requestId: string) => serviceLog.filter((line) => line.reqId === requestId);
  const eventually = async <T>(read: () => T, done: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 3_000;
    let value = read();
    while (!done(value) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      value = read();
    }
    return value;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-service-proxy-test-'));
    tls = await makeTestTls(dir, [PUBLIC_NAME]);
    const publicPort = await freePort();
    const servicePort = await freePort();
    baseUrl = `https://${PUBLIC_NAME}:${publicPort}`;
    server = await startTestServer({
      engine,
      port: servicePort,
      env: { MEMORY_SERVICE_BASE_URL: baseUrl, MEMORY_SERVICE_TRUST_PROXY: '127.0.0.1' },
      logger: createLogger('info', { write: (line: string) => serviceLog.push(JSON.parse(line) as Record<string, unknown>) }),
    });
    aliceId = (await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password)).id;
    nginx = await startReadmeProxy(tls, publicPort, [servicePort]);
    callbacks = await startCallbackServer();
  });

  afterAll(async () => {
    await callbacks?.close();
    await nginx?.stop();
    await Promise.all(agents.map((agent) => agent.close()));
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('names the https BaseUrl in the 401 challenge and the discovery documents, whatever X-Forwarded-* the client sends', async () => {
    const fetchVia = httpsFetch();
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };
    // 401, not 403: the Host nginx passes ($host, without the port) is accepted.
    const challenge = await fetchVia(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forged },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toContain(`resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`);

    const resource = (await (await fetchVia(`${baseUrl}/.well-known/oauth-protected-resource/mcp`, { headers: forged })).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({ resource: `${baseUrl}/mcp`, authorization_servers: [baseUrl] });
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetchVia(`${baseUrl}${path}`, { headers: forged })).json()) as Record<string, unknown>;
      expect(metadata.issuer, path).toBe(baseUrl);
      const urls = Object.entries(metadata).filter(([key]) => key.endsWith('_endpoint') || key === 'jwks_uri');
      expect(urls.length, path).toBeGreaterThanOrEqual(4);
      for (const [key, url] of urls) expect(String(url).startsWith(`${baseUrl}/`), `${path} ${key}: ${String(url)}`).toBe(true);
    }

    const token = await server.token('carol');
    const listed = await fetchVia(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(listed.status).toBe(200);
    expect((await fetchVia(`${baseUrl}/metrics`)).status).toBe(404);
  });

  it('runs the whole browser OAuth login through the proxy, then remember and recall', async () => {
    const fetchVia = httpsFetch();
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'Connector behind nginx');
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider, fetch: fetchVia });
    await expect(new Client({ name: 'proxy-e2e', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const sentTo = provider.authorizationUrl!;
    expect(sentTo.origin + sentTo.pathname).toBe(`${baseUrl}/authorize`);
    expect(sentTo.searchParams.get('resource')).toBe(`${baseUrl}/mcp`);

    const callback = await authorizeInFreshBrowser(callbacks, sentTo, ALICE, 'allow', chromiumArgsFor(tls));
    expect(callback.searchParams.get('iss')).toBe(baseUrl);
    await transport.finishAuth(callback.searchParams.get('code')!);
    await transport.close();
    expect(decodeJwt(provider.tokens()!.access_token)).toMatchObject({ iss: baseUrl, aud: `${baseUrl}/mcp`, sub: aliceId });
    // Chromium went through nginx, over HTTP/2, for the sign-in pages.
    expect(nginx.accessLog()).toMatch(/"POST \/\S*interaction\/\S+\/login HTTP\/2\.0" 303/);

    const client = new Client({ name: 'proxy-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider, fetch: fetchVia }));
    try {
      expect((await client.callTool({ name: 'remember', arguments: { text: 'Alice sails a small boat on Lake Constance' } })).isError).toBeFalsy();
      const recalled = await client.callTool({ name: 'recall', arguments: { query: 'Where does Alice go sailing?' } });
      expect(JSON.stringify(recalled.structuredContent)).toContain('Lake Constance');
    } finally {
      await client.close();
    }
  });

  it("carries nginx's request id to the service's log and back in the response", async () => {
    const response = await httpsFetch()(`${baseUrl}/healthz`, { headers: { 'x-request-id': 'chosen-by-the-client' } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    // nginx's $request_id (32 hex digits) replaced the client's.
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    expect(await eventually(() => nginx.accessLog(), (log) => log.includes(requestId))).toContain(`${requestId} "GET /healthz HTTP/1.1" 200`);
    expect(logFor(requestId).map((line) => line.msg)).toEqual(['request completed']);
  });

  it('logs the client address from X-Forwarded-For, trusting only the hop nginx added', async () => {
    const response = await httpsFetch('127.0.0.2')(`${baseUrl}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    const requestId = response.headers.get('x-request-id')!;
    expect(await eventually(() => nginx.accessLog(), (log) => log.includes(requestId))).toContain(`127.0.0.2 ${requestId} `);
    const completed = logFor(requestId).find((line) => line.msg === 'request completed') as { req?: { remoteAddress?: string } } | undefined;
    expect(completed?.req?.remoteAddress).toBe('127.0.0.2');
  });

  it('throttles failed sign-ins per client address, as X-Forwarded-For gives it', async () => {
    const registered = await registerClient(
      baseUrl,
      { redirect_uris: [callbacks.redirectUri], token_endpoint_auth_method: 'none', client_name: 'throttle test' },
      {},
      httpsFetch(),
    );
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id!;

    /** Opens the sign-in page as a browser would (cookies kept by hand); returns a function posting the form. */
    const openSignIn = async (fetchVia: Fetch, headers: Record<string, string> = {}) => {
      const cookies = new Map<string, string>();
      const keepCookies = (response: Response) => {
        for (const cookie of response.headers.getSetCookie()) {
          const [pair = ''] = cookie.split(';');
          const at = pair.indexOf('=');
          cookies.set(pair.slice(0, at), pair.slice(at + 1));
        }
      };
      const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      let url = authorizationUrl(baseUrl, {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: callbacks.redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 'throttle',
      }).href;
      let page: Response | undefined;
      for (let hop = 0; hop < 5 && page === undefined; hop++) {
        const response = await fetchVia(url, { redirect: 'manual', headers: { cookie: cookieHeader(), ...headers } });
        keepCookies(response);
        if (response.status >= 300 && response.status < 400) url = new URL(response.headers.get('location')!, url).href;
        else page = response;
      }
      const html = await page!.text();
      const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      return async (password: string) => {
        const response = await fetchVia(new URL(action, baseUrl).href, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams({ csrf, username: ALICE.username, password }).toString(),
        });
        return { status: response.status, retryAfter: response.headers.get('retry-after') };
      };
    };

    const fromTwo = await openSignIn(httpsFetch('127.0.0.2'));
    for (let attempt = 1; attempt <= 5; attempt++) expect((await fromTwo(`wrong-${attempt}`)).status, `attempt ${attempt}`).toBe(401);
    const throttled = await fromTwo(ALICE.password);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);

    // A forged X-Forwarded-For does not move 127.0.0.2 out of its limit…
    const forging = await openSignIn(httpsFetch('127.0.0.2'), { 'x-forwarded-for': '127.0.0.3' });
    expect((await forging(ALICE.password)).status).toBe(429);
    // …while another address behind the same proxy is not throttled: its right password signs in (303).
    const fromThree = await openSignIn(httpsFetch('127.0.0.3'));
    expect((await fromThree('wrong-again')).status).toBe(401);
    expect((await fromThree(ALICE.password)).status).toBe(303);
  });
});
