import { auth as authV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { freshFetch } from './fresh-fetch.js';
import { MemoryOAuthProvider } from './memory-oauth-provider.js';
import { authorizationUrl, pkce, registerClient, signInWithForms, tokenRequest } from './oauth-client.js';

const ALICE = { username: 'alice', password: 'correct horse battery staple' };

/**
 * Registration bodies as real clients send them, each with where it was read. Only fields the source shows are
 * here; a loopback port the client picks when it signs in is written {port}.
 */
const CLIENTS: readonly { label: string; source: string; body: Record<string, unknown>; signInWith: readonly string[] }[] = [
  {
    label: 'Cursor (three redirect URIs in one registration)',
    source:
      'Cursor docs (https://cursor.com/docs/mcp: cursor://anysphere.cursor-mcp/oauth/callback) and the three-URI body quoted in ' +
      'erp-mafia/accounted#2225 and koala73/worldmonitor#8305 ("Cursor staff confirmed")',
    body: {
      redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'https://www.cursor.com/agents/mcp/oauth/callback', 'http://localhost:8787/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    signInWith: ['cursor://anysphere.cursor-mcp/oauth/callback', 'https://www.cursor.com/agents/mcp/oauth/callback', 'http://localhost:8787/callback'],
  },
  {
    label: 'Claude (claude.ai)',
    source: 'the registration response quoted in anthropics/claude-code#30511 (Claude.ai connector, python-httpx)',
    body: { redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' },
    signInWith: ['https://claude.ai/api/mcp/auth_callback'],
  },
  {
    label: 'Claude (claude.com)',
    source: "Claude's connector callback on its claude.com domain, same shape as the claude.ai one (issue 42)",
    body: { redirect_uris: ['https://claude.com/api/mcp/auth_callback'], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' },
    signInWith: ['https://claude.com/api/mcp/auth_callback'],
  },
  {
    label: 'VS Code',
    source: 'microsoft/vscode fetchDynamicRegistration (src/vs/base/common/oauth.ts), DEFAULT_AUTH_FLOW_PORT = 33418',
    body: {
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['https://insiders.vscode.dev/redirect', 'https://vscode.dev/redirect', 'http://127.0.0.1/', 'http://127.0.0.1:33418/'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    },
    // RFC 8252 §7.3: `http://127.0.0.1/` matches whatever port VS Code opened.
    signInWith: ['https://vscode.dev/redirect', 'http://127.0.0.1:33418/', 'http://127.0.0.1:51234/'],
  },
  {
    label: 'mcp-remote 0.1.38',
    source: 'geelen/mcp-remote src/lib/node-oauth-client-provider.ts clientMetadata at d26e5a8 (callback http://localhost:{port}/oauth/callback)',
    body: {
      redirect_uris: ['http://localhost:3334/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP CLI Client',
      client_uri: 'https://github.com/modelcontextprotocol/mcp-cli',
      software_id: '2e6dc280-f3c3-4e01-99a7-8181dbd1d23d',
      software_version: '0.1.38',
    },
    // Its callback port moves when the registered one is taken (EADDRINUSE fallback): any port must match.
    signInWith: ['http://localhost:3334/oauth/callback', 'http://localhost:40123/oauth/callback'],
  },
];

/**
 * What real clients do around OAuth: several redirect URIs per registration (loopback on any port, an app's own
 * scheme), RFC 9207 `iss` on every authorization response, and a registration the server no longer knows.
 */
describe.each(engines)('client OAuth habits on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** An authorization request for `clientId` to `redirectUri`, answered in the forms; the callback URL. */
  const authorize = async (clientId: string, redirectUri: string, extra: Record<string, string> = {}, decision: 'allow' | 'deny' = 'allow') => {
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(server.url, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'habits-state',
      ...extra,
    });
    return { callback: await signInWithForms(url, ALICE, { decision }), verifier };
  };

  describe.each(CLIENTS)('$label', ({ body, signInWith }) => {
    let clientId: string;

    it('registers with the body the client sends, every redirect URI kept', async () => {
      const registered = await registerClient(server.url, body);
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      expect(registered.body.redirect_uris).toEqual(body.redirect_uris);
      expect(registered.body).not.toHaveProperty('client_secret');
      clientId = registered.body.client_id!;
    });

    it.each(signInWith)('signs in through %s, the callback naming the issuer, and the code buys a token', async (redirectUri) => {
      const { callback, verifier } = await authorize(clientId, redirectUri);
      expect(callback.href.startsWith(redirectUri)).toBe(true);
      expect(Object.fromEntries(callback.searchParams)).toEqual({ code: expect.any(String), state: 'habits-state', iss: server.url });
      const tokens = await tokenRequest(server.url, { grant_type: 'authorization_code', client_id: clientId, code: callback.searchParams.get('code')!, code_verifier: verifier, redirect_uri: redirectUri });
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      expect(tokens.body.access_token).toEqual(expect.any(String));
    });
  });

  it('a loopback port is free only on a loopback callback: another host or path is refused', async () => {
    const registered = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1:5000/callback'], token_endpoint_auth_method: 'none' });
    const clientId = registered.body.client_id!;
    for (const other of ['http://127.0.0.1:6000/other', 'http://localhost:5000/callback', 'https://127.0.0.1:5000/callback']) {
      const { verifier: _unused, challenge } = pkce();
      const response = await fetch(authorizationUrl(server.url, { client_id: clientId, response_type: 'code', redirect_uri: other, code_challenge: challenge, code_challenge_method: 'S256' }), {
        redirect: 'manual',
      });
      // Never sent to an unregistered address: the browser gets an error page instead.
      expect(response.status, other).toBe(400);
      expect(await response.text()).toContain('redirect_uri did not match any of the client');
    }
  });

  it('refuses callbacks a browser would run itself, and http off the machine', async () => {
    for (const uri of ['javascript://x/%0aalert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'http://evil.example/cb', 'vbscript://x/y', 'cursor://x/cb#fragment']) {
      const { status, body } = await registerClient(server.url, { redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(status, uri).toBe(400);
      expect(body.error, uri).toBe('invalid_redirect_uri');
    }
    // One refused URI refuses the registration, naming it.
    const mixed = await registerClient(server.url, { redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'http://evil.example/cb'] });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error_description).toContain('refused: http://evil.example/cb');
  });

  it('every authorization response carries iss (RFC 9207): success, and each error sent back to the client', async () => {
    const registered = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' });
    const clientId = registered.body.client_id!;
    const redirectUri = 'http://127.0.0.1:7777/cb';
    const errorCallback = async (params: Record<string, string | undefined>) => {
      const url = authorizationUrl(server.url, { client_id: clientId, redirect_uri: redirectUri, state: 'habits-state', ...params });
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status, JSON.stringify(params)).toBe(303);
      return new URL(response.headers.get('location')!);
    };
    const { challenge } = pkce();
    const cases: [string, Record<string, string | undefined>][] = [
      ['invalid_request', { response_type: 'code' }], // no code_challenge: PKCE is required
      ['unsupported_response_type', { response_type: 'token', code_challenge: challenge, code_challenge_method: 'S256' }],
      ['invalid_target', { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://elsewhere.example/mcp' }],
      ['login_required', { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', prompt: 'none' }],
    ];
    for (const [error, params] of cases) {
      const callback = await errorCallback(params);
      expect(callback.href.startsWith(redirectUri), error).toBe(true);
      // A token response type answers in the fragment, as its response mode is.
      const answer = callback.search === '' ? new URLSearchParams(callback.hash.slice(1)) : callback.searchParams;
      expect(Object.fromEntries(answer), error).toMatchObject({ error, state: 'habits-state', iss: server.url });
    }
    const denied = await authorize(clientId, redirectUri, {}, 'deny');
    expect(Object.fromEntries(denied.callback.searchParams)).toMatchObject({ error: 'access_denied', state: 'habits-state', iss: server.url });
    const allowed = await authorize(clientId, redirectUri);
    expect(Object.fromEntries(allowed.callback.searchParams)).toMatchObject({ code: expect.any(String), iss: server.url });
  });

  it('an unknown or evicted client_id: invalid_client at the token endpoint, and a page telling the person to reconnect', async () => {
    const { challenge } = pkce();
    const page = await fetch(authorizationUrl(server.url, { client_id: 'evicted-client', response_type: 'code', redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: challenge, code_challenge_method: 'S256' }), {
      redirect: 'manual',
    });
    // Never redirected: an unknown client's redirect_uri is unverified.
    expect(page.status).toBe(400);
    expect(await page.text()).toMatch(/Go back to the application and connect again/);
    for (const grant of [
      { grant_type: 'refresh_token', refresh_token: 'whatever' },
      { grant_type: 'authorization_code', code: 'whatever', code_verifier: 'x'.repeat(43), redirect_uri: 'http://127.0.0.1:9/cb' },
    ]) {
      const answer = await tokenRequest(server.url, { client_id: 'evicted-client', ...grant });
      expect(answer.status, grant.grant_type).toBe(401);
      expect(answer.body.error, grant.grant_type).toBe('invalid_client');
    }
  });

  it('SDK 2.x registers again when the server has evicted its registration', async () => {
    const provider = new MemoryOAuthProvider('http://127.0.0.1:8123/callback', 'evicted SDK 2.x client');
    expect(await authV2(provider, { serverUrl: server.mcpUrl, fetchFn: freshFetch })).toBe('REDIRECT');
    const callback = await signInWithForms(provider.authorizationUrl!, ALICE);
    expect(
      await authV2(provider, { serverUrl: server.mcpUrl, authorizationCode: callback.searchParams.get('code')!, iss: callback.searchParams.get('iss')!, fetchFn: freshFetch }),
    ).toBe('AUTHORIZED');
    const evicted = (provider.clientInformation() as { client_id: string }).client_id;

    // The server forgets the client (as the cap on clients or the idle lifetime does), its tokens with it.
    await server.admin(
      `select set_config('memory_service.authorization_server', 'on', false); delete from oauth_objects where kind in ('Client', 'RefreshToken', 'Grant')`,
    );
    provider.authorizationUrl = undefined;
    // The refresh is told invalid_client; the SDK drops the registration and starts again with a new one.
    expect(await authV2(provider, { serverUrl: server.mcpUrl, fetchFn: freshFetch })).toBe('REDIRECT');
    expect(provider.invalidations).toEqual(expect.arrayContaining(['client', 'tokens']));
    const registeredAgain = (provider.clientInformation() as { client_id: string }).client_id;
    expect(registeredAgain).not.toBe(evicted);
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(registeredAgain);
    const again = await signInWithForms(provider.authorizationUrl!, ALICE);
    expect(
      await authV2(provider, { serverUrl: server.mcpUrl, authorizationCode: again.searchParams.get('code')!, iss: again.searchParams.get('iss')!, fetchFn: freshFetch }),
    ).toBe('AUTHORIZED');
  });
});
