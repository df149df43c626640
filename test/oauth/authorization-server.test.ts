import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import {
  authorizeInBrowser,
  browserSkipReason,
  launchBrowser,
  startCallbackServer,
  submitLogin,
  type Browser,
  type CallbackServer,
} from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { authorizationUrl, pkce, registerClient, tokenRequest } from './oauth-client.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const BOB = { username: 'bob', password: 'bob-has-a-long-password' };
const CAROL = { username: 'carol', password: 'carol-has-a-long-password' };

describe.skipIf(skip !== undefined).each(engines)('built-in authorization server on %s', (engine) => {
  let server: TestServer;
  let browser: Browser;
  let callbacks: CallbackServer;
  let users: UserStore;
  let clientId: string;

  beforeAll(async () => {
    server = await startTestServer({ engine, env: { MEMORY_SERVICE_ALLOWED_ORIGINS: 'http://localhost:6274' } });
    users = new UserStore(usersFilePath(server.config.dataDir));
    await users.add(BOB.username, BOB.password);
    await users.add(CAROL.username, CAROL.password);
    browser = await launchBrowser();
    callbacks = await startCallbackServer();
    const registered = await registerClient(server.url, {
      client_name: 'Protocol test',
      redirect_uris: [callbacks.redirectUri],
      token_endpoint_auth_method: 'none',
    });
    clientId = registered.body.client_id!;
  });
  afterAll(async () => {
    // First: chromium keeps a spare connection that the server's graceful close would wait for.
    await browser?.close();
    await callbacks?.close();
    await server?.close();
  });

  /** A browser sign-in from a clean slate (no session cookie), returning the callback and the PKCE verifier. */
  const signIn = async (
    params: Record<string, string | undefined> = {},
    credentials = BOB,
  ): Promise<{ callback: URL; verifier: string }> => {
    await browser.context.clearCookies();
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(server.url, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: callbacks.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'state-123',
      ...params,
    });
    return { callback: await authorizeInBrowser(browser, callbacks, url, credentials), verifier };
  };

  const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
    tokenRequest(server.url, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: callbacks.redirectUri,
      client_id: clientId,
      ...extra,
    });

  const refresh = (refreshToken: string) =>
    tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  describe('metadata', () => {
    it('publishes RFC 8414 and OpenID metadata with CORS', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const response = await fetch(`${server.url}${path}`, { headers: { origin: 'https://inspector.example' } });
        expect(response.status).toBe(200);
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(await response.json()).toMatchObject({
          issuer: server.url,
          authorization_endpoint: `${server.url}/authorize`,
          token_endpoint: `${server.url}/token`,
          registration_endpoint: `${server.url}/register`,
          revocation_endpoint: `${server.url}/revoke`,
          jwks_uri: `${server.url}/jwks`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          grant_types_supported: expect.arrayContaining(['authorization_code', 'refresh_token']),
          token_endpoint_auth_methods_supported: expect.arrayContaining(['none']),
          scopes_supported: expect.arrayContaining(['memory:read', 'memory:write']),
          authorization_response_iss_parameter_supported: true,
        });
      }
      const resource = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json();
      expect(resource).toMatchObject({ resource: server.mcpUrl, authorization_servers: [server.url] });
    });

    it('answers CORS preflights for the token and registration endpoints', async () => {
      for (const path of ['/token', '/register']) {
        const response = await fetch(`${server.url}${path}`, {
          method: 'OPTIONS',
          headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        });
        expect(response.status).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(response.headers.get('access-control-allow-methods')).toContain('POST');
        expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
      }
    });

    it('answers CORS on /mcp for allowed origins only, exposing WWW-Authenticate', async () => {
      const allowed = await server.post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { origin: 'http://localhost:6274' });
      expect(allowed.status).toBe(401);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
      const preflight = await fetch(server.mcpUrl, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
      const foreign = await server.post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { origin: 'https://evil.example' });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('dynamic client registration', () => {
    it('registers public clients with https or loopback callbacks', async () => {
      for (const uri of ['https://claude.ai/api/mcp/auth_callback', 'https://chatgpt.com/connector_platform_oauth_redirect', 'http://127.0.0.1:33418/', 'http://localhost:6274/oauth/callback', 'http://[::1]:9999/cb']) {
        const { status, body, headers } = await registerClient(
          server.url,
          { redirect_uris: [uri], token_endpoint_auth_method: 'none' },
          { origin: 'https://claude.ai' },
        );
        expect(status, uri).toBe(201);
        expect(body).toMatchObject({ redirect_uris: [uri], token_endpoint_auth_method: 'none', grant_types: expect.arrayContaining(['refresh_token']) });
        expect(Number.isInteger(body.client_id_issued_at)).toBe(true);
        expect(body).not.toHaveProperty('client_secret');
        expect(headers.get('access-control-allow-origin')).toBe('*');
      }
    });

    it('gives a secret to a client that names no authentication method (RFC 7591 default)', async () => {
      const { status, body } = await registerClient(server.url, { redirect_uris: ['https://app.example/cb'] });
      expect(status).toBe(201);
      expect(body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.any(String) });
    });

    it('refuses other callbacks with invalid_redirect_uri', async () => {
      for (const uri of ['http://evil.example/cb', 'javascript://x/%0aalert(1)', 'https://good.example/cb#fragment']) {
        const { status, body } = await registerClient(server.url, { redirect_uris: [uri] });
        expect(status, uri).toBe(400);
        expect(body.error).toBe('invalid_redirect_uri');
      }
    });
  });

  describe('authorization code flow', () => {
    it('defaults resource and scope, echoes state, names the issuer and issues RFC 9068 tokens', async () => {
      const { callback, verifier } = await signIn();
      expect(callback.searchParams.get('state')).toBe('state-123');
      expect(callback.searchParams.get('iss')).toBe(server.url);
      const tokens = await exchange(callback.searchParams.get('code')!, verifier);
      expect(tokens.status).toBe(200);
      expect(tokens.headers.get('cache-control')).toBe('no-store');
      expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'memory:read memory:write', expires_in: expect.any(Number) });
      expect(decodeJwt(tokens.body.access_token!)).toMatchObject({
        iss: server.url,
        aud: server.mcpUrl,
        sub: users.findByName('bob')!.id,
        client_id: clientId,
        scope: 'memory:read memory:write',
      });
      const remembered = await server.call(tokens.body.access_token!, 'remember', { text: 'Bob prefers window seats' });
      expect(remembered.isError).toBe(false);
    });

    it('issues a read-only token when only memory:read is asked, and /mcp answers 403 insufficient_scope for writes', async () => {
      const { callback, verifier } = await signIn({ scope: 'memory:read', resource: server.mcpUrl });
      const tokens = await exchange(callback.searchParams.get('code')!, verifier);
      expect(tokens.body.scope).toBe('memory:read');
      const token = tokens.body.access_token!;
      expect((await server.call(token, 'recall', { query: 'seats' })).isError).toBe(false);
      const write = await server.post(
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'remember', arguments: { text: 'Bob likes tea' } } },
        { authorization: `Bearer ${token}` },
      );
      expect(write.status).toBe(403);
      const challenge = write.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain('scope="memory:read memory:write"');
      expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`);
    });

    it('refuses a wrong PKCE verifier', async () => {
      const { callback } = await signIn();
      const tokens = await exchange(callback.searchParams.get('code')!, pkce().verifier);
      expect(tokens.status).toBe(400);
      expect(tokens.body.error).toBe('invalid_grant');
    });

    it('refuses a code used twice', async () => {
      const { callback, verifier } = await signIn();
      const code = callback.searchParams.get('code')!;
      expect((await exchange(code, verifier)).status).toBe(200);
      const again = await exchange(code, verifier);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
    });

    it('refuses an unregistered redirect URI, without redirecting to it', async () => {
      await browser.context.clearCookies();
      const { page } = browser;
      const response = await page.goto(
        authorizationUrl(server.url, {
          client_id: clientId,
          response_type: 'code',
          redirect_uri: 'https://evil.example/steal',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }).href,
      );
      expect(response!.status()).toBe(400);
      expect(page.url()).toContain(server.url);
      expect(await page.textContent('body')).toContain('redirect_uri');
      // And at the token endpoint: the code is bound to the redirect URI it was issued for.
      const { callback, verifier } = await signIn();
      const tokens = await exchange(callback.searchParams.get('code')!, verifier, { redirect_uri: `${callbacks.redirectUri}/other` });
      expect(tokens.status).toBe(400);
      expect(tokens.body.error).toBe('invalid_grant');
    });

    it('refuses a foreign resource', async () => {
      const { callback } = await signIn({ resource: 'https://other.example/mcp' });
      expect(callback.searchParams.get('error')).toBe('invalid_target');
      expect(callback.searchParams.get('code')).toBeNull();
      const granted = await signIn();
      const tokens = await exchange(granted.callback.searchParams.get('code')!, granted.verifier, { resource: 'https://other.example/mcp' });
      expect(tokens.status).toBe(400);
      expect(tokens.body.error).toBe('invalid_target');
    });

    it('sends access_denied back when the user denies consent', async () => {
      await browser.context.clearCookies();
      const url = authorizationUrl(server.url, {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: callbacks.redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 'deny-me',
      });
      const callback = await authorizeInBrowser(browser, callbacks, url, BOB, 'deny');
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe('deny-me');
    });

    it('answers 401 invalid_client for an unknown client, so that it registers again', async () => {
      const tokens = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: 'whatever', client_id: 'no-such-client' });
      expect(tokens.status).toBe(401);
      expect(tokens.body.error).toBe('invalid_client');
    });
  });

  describe('refresh tokens', () => {
    it('rotate, and a replayed one revokes its whole family', async () => {
      const { callback, verifier } = await signIn();
      const first = (await exchange(callback.searchParams.get('code')!, verifier)).body.refresh_token!;
      const second = await refresh(first);
      expect(second.status).toBe(200);
      expect(second.headers.get('cache-control')).toBe('no-store');
      const rotated = second.body.refresh_token!;
      expect(rotated).not.toBe(first);
      expect(decodeJwt(second.body.access_token!).scope).toBe('memory:read memory:write');

      const replay = await refresh(first);
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
      // The thief's replay also ends the legitimate client's newer token.
      expect((await refresh(rotated)).body.error).toBe('invalid_grant');
    });

    it('stop working once revoked', async () => {
      const { callback, verifier } = await signIn();
      const refreshToken = (await exchange(callback.searchParams.get('code')!, verifier)).body.refresh_token!;
      const revoked = await fetch(`${server.url}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId }),
      });
      expect(revoked.status).toBe(200);
      expect((await refresh(refreshToken)).body.error).toBe('invalid_grant');
    });

    it('stop working after a password change or removal of the user', async () => {
      const carol = await signIn({}, CAROL);
      const carolRefresh = (await exchange(carol.callback.searchParams.get('code')!, carol.verifier)).body.refresh_token!;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await users.setPassword('carol', 'carol-has-a-new-password');
      expect((await refresh(carolRefresh)).body.error).toBe('invalid_grant');

      const again = await signIn({}, { username: 'carol', password: 'carol-has-a-new-password' });
      const againRefresh = (await exchange(again.callback.searchParams.get('code')!, again.verifier)).body.refresh_token!;
      expect((await refresh(againRefresh)).status).toBe(200);
      users.remove('carol');
      const after = await refresh(againRefresh);
      expect(after.status).toBe(400);
      expect(after.body.error).toBe('invalid_grant');
    });
  });

  describe('login page', () => {
    const openLogin = async () => {
      await browser.context.clearCookies();
      const { page } = browser;
      await page.goto(
        authorizationUrl(server.url, {
          client_id: clientId,
          response_type: 'code',
          redirect_uri: callbacks.redirectUri,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }).href,
      );
      return page;
    };

    it('is a small, phone-sized, frame-proof page', async () => {
      const page = await openLogin();
      expect(await page.locator('meta[name=viewport]').count()).toBe(1);
      expect(await page.locator('input[name=csrf]').count()).toBe(1);
      const response = await page.reload();
      expect(response!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response!.headers()['cache-control']).toBe('no-store');
    });

    it('refuses a form without its CSRF token', async () => {
      const page = await openLogin();
      await page.locator('input[name=csrf]').evaluate((input) => ((input as unknown as { value: string }).value = 'forged'));
      const response = await submitLogin(page, BOB);
      expect(response.status()).toBe(403);
    });

    it('throttles repeated failures per user and address with 429 and Retry-After', async () => {
      const page = await openLogin();
      for (let attempt = 1; attempt <= 5; attempt++) {
        const response = await submitLogin(page, { username: 'bob', password: `wrong-password-${attempt}` });
        expect(response.status(), `attempt ${attempt}`).toBe(401);
        expect(await page.textContent('.error')).toContain('Wrong user name or password');
      }
      // Now even the right password waits.
      const throttled = await submitLogin(page, BOB);
      expect(throttled.status()).toBe(429);
      expect(Number(throttled.headers()['retry-after'])).toBeGreaterThan(0);
      expect(await page.textContent('.error')).toContain('Too many failed sign-in attempts');
    });
  });
});
