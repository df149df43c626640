import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { authorizeInFreshBrowser, browserSkipReason, startCallbackServer, type CallbackServer } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { freshFetch } from './fresh-fetch.js';
import { MemoryOAuthProvider } from './memory-oauth-provider.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE = { username: 'alice', password: 'correct horse battery staple' };

/**
 * The official MCP SDK client's OAuth support against the real server, with the user's part played in a
 * real headless chromium on the real login and consent pages.
 */
describe.skipIf(skip !== undefined).each(engines)('MCP SDK OAuth login on %s', (engine) => {
  let server: TestServer;
  let callbacks: CallbackServer;
  let aliceId: string;
  const provider = { current: undefined as unknown as MemoryOAuthProvider };
  /** Every token-endpoint answer the SDK received, to see what the server said. */
  const tokenResponses: { status: number; body: Record<string, unknown> }[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await freshFetch(input, init);
    if (String(input instanceof Request ? input.url : input).endsWith('/token')) {
      tokenResponses.push({ status: response.status, body: (await response.clone().json()) as Record<string, unknown> });
    }
    return response;
  };

  beforeAll(async () => {
    server = await startTestServer({ engine });
    aliceId = (await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password)).id;
    callbacks = await startCallbackServer();
    provider.current = new MemoryOAuthProvider(callbacks.redirectUri, 'Claude-like connector');
  });
  afterAll(async () => {
    await callbacks?.close();
    await server?.close();
  });

  const connect = async (): Promise<Client> => {
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider.current, fetch: recordingFetch }));
    return client;
  };

  /** 401 → discovery → registration → browser sign-in and consent → finishAuth. */
  const signIn = async (): Promise<URL> => {
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider.current, fetch: recordingFetch });
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.current.authorizationUrl!;
    const callback = await authorizeInFreshBrowser(callbacks, authorizationUrl, ALICE);
    await transport.finishAuth(callback.searchParams.get('code')!);
    await transport.close();
    return callback;
  };

  it('runs the whole flow: 401, discovery, registration, browser login and consent, token, tools', async () => {
    const callback = await signIn();
    const authorizationUrl = provider.current.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${server.url}/authorize`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(server.mcpUrl);
    // RFC 9207: the callback names the issuer; the state comes back unchanged.
    expect(callback.searchParams.get('iss')).toBe(server.url);
    expect(callback.searchParams.get('state')).toBe(provider.current.lastState);

    const tokens = provider.current.tokens()!;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      iss: server.url,
      aud: server.mcpUrl,
      sub: aliceId,
      scope: 'memory:read memory:write',
      client_id: (provider.current.clientInformation() as { client_id: string }).client_id,
      jti: expect.any(String),
    });

    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['remember', 'recall']));
    const remembered = await client.callTool({ name: 'remember', arguments: { text: 'Alice keeps bees on her balcony' } });
    expect(remembered.isError).toBeFalsy();
    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'What does Alice keep on the balcony?' } });
    expect(JSON.stringify(recalled.structuredContent)).toContain('bees');
    await client.close();
  });

  it('refreshes: a new access token and a rotated refresh token', async () => {
    const before = provider.current.tokens()!;
    expect(await auth(provider.current, { serverUrl: server.mcpUrl, fetchFn: recordingFetch })).toBe('AUTHORIZED');
    const after = provider.current.tokens()!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).toEqual(expect.any(String));
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(decodeJwt(after.access_token).sub).toBe(aliceId);
    const client = await connect();
    expect((await client.listTools()).tools.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it('keeps tokens and refresh tokens working across a restart with the state file intact', async () => {
    const { dataDir, schema } = server;
    const port = new URL(server.url).port;
    await server.close({ keepData: true });
    server = await startTestServer({ engine, dataDir, schema, port: Number(port) });
    const client = await connect();
    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'bees' } });
    expect(JSON.stringify(recalled.structuredContent)).toContain('bees');
    await client.close();
    expect(await auth(provider.current, { serverUrl: server.mcpUrl, fetchFn: recordingFetch })).toBe('AUTHORIZED');
  });

  it('after the state file is deleted: 401, refresh fails with invalid_client, and the client registers and logs in again', async () => {
    const { dataDir, schema } = server;
    const port = Number(new URL(server.url).port);
    const oldClientId = (provider.current.clientInformation() as { client_id: string }).client_id;
    const oldAccessToken = provider.current.tokens()!.access_token;
    await server.close({ keepData: true });
    rmSync(server.config.oauth.asIniFile);
    server = await startTestServer({ engine, dataDir, schema, port });

    const refused = await freshFetch(server.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${oldAccessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token".*resource_metadata="/);

    tokenResponses.length = 0;
    provider.current.authorizationUrl = undefined;
    // The SDK refreshes, is told invalid_client, forgets everything and starts over with a new registration.
    expect(await auth(provider.current, { serverUrl: server.mcpUrl, fetchFn: recordingFetch })).toBe('REDIRECT');
    expect(tokenResponses[0]).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
    expect(provider.current.invalidations).toContain('all');
    const newClientId = (provider.current.clientInformation() as { client_id: string }).client_id;
    expect(newClientId).not.toBe(oldClientId);

    const callback = await authorizeInFreshBrowser(callbacks, provider.current.authorizationUrl!, ALICE);
    expect(await auth(provider.current, { serverUrl: server.mcpUrl, authorizationCode: callback.searchParams.get('code')!, fetchFn: recordingFetch })).toBe(
      'AUTHORIZED',
    );
    const client = await connect();
    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'bees' } });
    // Same user, same `sub`: the memories survived the reset of the authorization server.
    expect(JSON.stringify(recalled.structuredContent)).toContain('bees');
    await client.close();
  });
});
