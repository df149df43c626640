import { lookup as dnsLookup } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFunction } from '../../src/auth/authorization-server/client-metadata-fetch.js';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { authorizeInFreshBrowser, browserSkipReason, startCallbackServer, type CallbackServer } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { makeTestTls, nginxSkipReason, type TestTls } from '../helpers/nginx.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { MemoryOAuthProvider } from './memory-oauth-provider.js';
import { authorizationUrl, pkce } from './oauth-client.js';

// openssl makes the documents' certificate; nginxSkipReason checks for it (and nginx, installed alongside).
const skip = browserSkipReason() ?? nginxSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE = { username: 'alice', password: 'correct horse battery staple' };
/** The documents' host, named in OAuthClientMetadataAllowedHosts, and one that is not: both resolve to loopback. */
const ALLOWED = 'client.test';
const NOT_ALLOWED = 'other.test';

/** The test's resolver at the network edge: the `.test` names (RFC 6761) are this machine. */
const testLookup: LookupFunction = (hostname, options, callback) => {
  if (hostname !== ALLOWED && hostname !== NOT_ALLOWED) {
    dnsLookup(hostname, options, callback as never);
    return;
  }
  if ((options as { all?: boolean }).all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/**
 * Client ID Metadata Documents: a client_id that is an https URL is resolved by fetching it. The documents are
 * served over https by a server whose CA the service trusts through its injected network edge; the official MCP
 * SDK client signs in with `clientMetadataUrl` in a real browser.
 */
describe.skipIf(skip !== undefined).each(engines)('client metadata documents on %s', (engine) => {
  let dir: string;
  let tls: TestTls;
  let documents: Server;
  let port: number;
  let server: TestServer;
  let callbacks: CallbackServer;
  const hits = new Map<string, number>();
  const documentUrl = (path: string, host = ALLOWED) => `https://${host}:${port}${path}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-service-cimd-'));
    tls = await makeTestTls(dir, [ALLOWED, NOT_ALLOWED]);
    const { readFileSync } = await import('node:fs');
    callbacks = await startCallbackServer();
    documents = createServer({ cert: readFileSync(tls.fullchainFile), key: readFileSync(tls.keyFile) }, (request, response) => {
      const path = (request.url ?? '/').split('?')[0]!;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const host = request.headers.host ?? '';
      const self = `https://${host}${path}`;
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      const document = (extra: Record<string, unknown> = {}) => ({
        client_id: self,
        client_name: 'Metadata-document connector',
        client_uri: `https://${host}/`,
        redirect_uris: [callbacks.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...extra,
      });
      switch (path) {
        case '/connector/client.json':
        case '/cached/client.json':
          return json(200, document(), { 'cache-control': 'max-age=300' });
        case '/no-method/client.json': {
          const { token_endpoint_auth_method: _none, ...rest } = document();
          return json(200, rest);
        }
        case '/big/client.json':
          return json(200, document({ client_name: 'b'.repeat(6 * 1024) }));
        case '/slow/client.json':
          setTimeout(() => json(200, document()), 4_000).unref();
          return;
        case '/mismatch/client.json':
          return json(200, document({ client_id: `https://${host}/someone-else/client.json` }));
        case '/redirect/client.json':
          return response.writeHead(302, { location: '/connector/client.json' }).end();
        case '/evil-redirect/client.json':
          return json(200, document({ redirect_uris: ['http://evil.example/steal'] }));
        case '/secret/client.json':
          return json(200, document({ token_endpoint_auth_method: 'client_secret_basic' }));
        default:
          return json(404, { error: 'not found' });
      }
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    port = (documents.address() as AddressInfo).port;
    server = await startTestServer({
      engine,
      env: { MEMORY_SERVICE_OAUTH_CLIENT_METADATA_ALLOWED_HOSTS: ALLOWED },
      compose: { clientMetadataConnect: { ca: tls.caPem, lookup: testLookup } },
    });
    await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password);
  });

  afterAll(async () => {
    await callbacks?.close();
    await server?.close();
    documents?.closeAllConnections();
    await new Promise((resolve) => documents?.close(resolve));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** GET /authorize for a client_id; the page (or redirect) the browser would get. */
  const authorize = async (clientId: string, redirectUri = callbacks.redirectUri) => {
    const url = authorizationUrl(server.url, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const response = await server.service.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    const setCookies = [response.headers['set-cookie'] ?? []].flat();
    const cookie = setCookies.map((line) => line.split(';')[0]).join('; ');
    return { status: response.statusCode, body: response.body, location: response.headers.location, cookie };
  };

  it('advertises client_id_metadata_document_supported', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    // Dynamic registration stays available for clients without a document.
    expect(metadata.registration_endpoint).toBe(`${server.url}/register`);
  });

  it("signs in the official SDK client identified by its clientMetadataUrl, through the browser, and names the document's host", async () => {
    const clientId = documentUrl('/connector/client.json');
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'ignored: the document names the client', clientId);
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider });
    await expect(new Client({ name: 'cimd-e2e', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    // No registration: the client_id is the document's URL.
    expect(provider.clientInformation()).toMatchObject({ client_id: clientId });
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(clientId);

    const signInPage = await authorize(clientId);
    expect(signInPage.status).toBe(303);
    const page = await server.service.app.inject({ method: 'GET', url: signInPage.location as string, headers: { cookie: signInPage.cookie } });
    expect(page.body).toContain('Metadata-document connector');
    expect(page.body).toContain(`Its description is published by ${ALLOWED}:${port}`);

    const callback = await authorizeInFreshBrowser(callbacks, provider.authorizationUrl!, ALICE);
    expect(callback.searchParams.get('iss')).toBe(server.url);
    await transport.finishAuth(callback.searchParams.get('code')!);
    await transport.close();
    expect(decodeJwt(provider.tokens()!.access_token)).toMatchObject({ client_id: clientId, aud: server.mcpUrl });
    expect(provider.tokens()!.refresh_token).toEqual(expect.any(String));

    const client = new Client({ name: 'cimd-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider }));
    try {
      expect((await client.callTool({ name: 'remember', arguments: { text: 'Alice reads on the night train' } })).isError).toBeFalsy();
      const recalled = await client.callTool({ name: 'recall', arguments: { query: 'Where does Alice read?' } });
      expect(JSON.stringify(recalled.structuredContent)).toContain('night train');
    } finally {
      await client.close();
    }
  });

  it('fetches a document once while its Cache-Control allows, and remembers a failure for a while', async () => {
    expect((await authorize(documentUrl('/cached/client.json'))).status).toBe(303);
    expect((await authorize(documentUrl('/cached/client.json'))).status).toBe(303);
    expect(hits.get('/cached/client.json')).toBe(1);
    const missing = await authorize(documentUrl('/missing/client.json'));
    expect(missing.status).toBe(400);
    expect(missing.body).toContain('the client metadata document answered HTTP 404');
    expect((await authorize(documentUrl('/missing/client.json'))).body).toContain('answered HTTP 404');
    expect(hits.get('/missing/client.json')).toBe(1);
  });

  it('makes a document without an authentication method a public client', async () => {
    expect((await authorize(documentUrl('/no-method/client.json'))).status).toBe(303);
  });

  it.each([
    ['an http URL', () => documentUrl('/connector/client.json').replace('https:', 'http:'), 'client is invalid'],
    ['a host resolving to loopback that the operator did not allow', () => documentUrl('/connector/client.json', NOT_ALLOWED), `host ${NOT_ALLOWED} is not a public address`],
    ['a loopback address literal', () => documentUrl('/connector/client.json', '127.0.0.1'), 'host 127.0.0.1 is not a public address'],
    ['a document over 5 KB', () => documentUrl('/big/client.json'), 'the client metadata document is larger than 5120 bytes'],
    ['a document that takes too long', () => documentUrl('/slow/client.json'), 'the client metadata document did not arrive within 2.5 s'],
    ['a document whose client_id is another URL', () => documentUrl('/mismatch/client.json'), "the client metadata document's client_id is not the URL it was fetched from"],
    ['a redirect', () => documentUrl('/redirect/client.json'), 'answered HTTP 302 (redirects are not followed)'],
    ['a document with a non-loopback http redirect URI', () => documentUrl('/evil-redirect/client.json'), 'redirect_uris must use https, http on a loopback address'],
    ['a document naming a shared-secret method', () => documentUrl('/secret/client.json'), 'must not use shared-secret token endpoint authentication methods'],
  ])('refuses %s with a page saying why', async (_case, clientId, reason) => {
    const answer = await authorize(clientId());
    expect(answer.status).toBe(400);
    expect(answer.location).toBeUndefined();
    expect(answer.body).toContain('Sign-in failed');
    expect(answer.body).toContain(reason.replaceAll("'", '&#39;'));
  });

  it('refuses a redirect_uri the document does not list, without redirecting to it', async () => {
    const answer = await authorize(documentUrl('/connector/client.json'), 'https://evil.example/steal');
    expect(answer.status).toBe(400);
    expect(answer.location).toBeUndefined();
    expect(answer.body).toContain('redirect_uri did not match');
  });
});
