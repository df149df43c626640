import { auth as authV2, Client as ClientV2, StreamableHTTPClientTransport as TransportV2, UnauthorizedError as UnauthorizedV2 } from '@modelcontextprotocol/client';
import { auth as authV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { authorizeInBrowser, browserSkipReason, launchBrowser, startCallbackServer, type Browser, type CallbackServer } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { freshFetch } from './fresh-fetch.js';
import { MemoryOAuthProvider } from './memory-oauth-provider.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE = { username: 'alice', password: 'correct horse battery staple' };

const clientIdOf = (provider: MemoryOAuthProvider) => (provider.clientInformation() as { client_id: string }).client_id;
const scopeOf = (provider: MemoryOAuthProvider) => String(decodeJwt(provider.tokens()!.access_token).scope);

/**
 * Step-up: a connector that signed in for `memory:read` (and registered with that scope, as SDK 2.x does) asks
 * for `memory:write` when a write is refused with 403 insufficient_scope, and gets it after the person's consent,
 * with the same registration. The person's part is played in a real chromium on the real pages.
 */
describe.skipIf(skip !== undefined).each(engines)('step-up from memory:read to memory:write on %s', (engine) => {
  let server: TestServer;
  let callbacks: CallbackServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password);
    callbacks = await startCallbackServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await callbacks?.close();
    await server?.close();
  });

  /** What the consent page lists (each scope's description). */
  const consentScopes = async (): Promise<string> => (await browser.page.locator('li').allInnerTexts()).join(' | ');

  it('SDK 2.x: a read-only login, then a refused write re-authorizes for memory:write and the write succeeds', async () => {
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'SDK 2.x connector', undefined, 'memory:read');
    // A read-only host: it asks for memory:read, and SDK 2.x registers with the scope it asks for.
    expect(await authV2(provider, { serverUrl: server.mcpUrl, scope: 'memory:read', fetchFn: freshFetch })).toBe('REDIRECT');
    expect(provider.authorizationUrl!.searchParams.get('scope')).toBe('memory:read');
    const registeredAs = clientIdOf(provider);
    const callback = await authorizeInBrowser(browser, callbacks, provider.authorizationUrl!, ALICE);
    expect(callback.searchParams.get('error')).toBeNull();
    expect(
      await authV2(provider, { serverUrl: server.mcpUrl, authorizationCode: callback.searchParams.get('code')!, iss: callback.searchParams.get('iss')!, fetchFn: freshFetch }),
    ).toBe('AUTHORIZED');
    expect(scopeOf(provider)).toBe('memory:read');

    const transport = new TransportV2(new URL(server.mcpUrl), { authProvider: provider, fetch: freshFetch });
    const client = new ClientV2({ name: 'step-up-v2', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.callTool({ name: 'recall', arguments: { query: 'anything' } })).isError).toBeFalsy();

    // A write: 403 insufficient_scope, the SDK re-authorizes for the union and hands over the browser step.
    provider.authorizationUrl = undefined;
    await expect(client.callTool({ name: 'remember', arguments: { text: 'Alice prefers tea to coffee' } })).rejects.toBeInstanceOf(UnauthorizedV2);
    const stepUp = provider.authorizationUrl!;
    expect(new Set(stepUp.searchParams.get('scope')!.split(' '))).toEqual(new Set(['memory:read', 'memory:write']));
    expect(stepUp.searchParams.get('client_id')).toBe(registeredAs);

    const consented = await authorizeInBrowser(browser, callbacks, stepUp, ALICE);
    // Before the fix this came back error=invalid_scope ("requested scope is not allowed").
    expect(Object.fromEntries(consented.searchParams)).toMatchObject({ code: expect.any(String), iss: server.url });
    await transport.finishAuth(consented.searchParams);
    expect(new Set(scopeOf(provider).split(' '))).toEqual(new Set(['memory:read', 'memory:write']));
    expect(clientIdOf(provider)).toBe(registeredAs);

    const remembered = await client.callTool({ name: 'remember', arguments: { text: 'Alice prefers tea to coffee' } });
    expect(remembered.isError).toBeFalsy();
    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'What does Alice drink?' } });
    expect(JSON.stringify(recalled.structuredContent)).toContain('tea');
    await client.close();
  });

  it('SDK 1.x: its upscoping only refreshes (its own bug), and the re-authorization its host then runs is granted', async () => {
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'SDK 1.x connector', undefined, 'memory:read');
    expect(await authV1(provider, { serverUrl: server.mcpUrl, scope: 'memory:read', fetchFn: freshFetch })).toBe('REDIRECT');
    const registeredAs = clientIdOf(provider);
    const callback = await authorizeInBrowser(browser, callbacks, provider.authorizationUrl!, ALICE);
    const code = callback.searchParams.get('code')!;
    expect(await authV1(provider, { serverUrl: server.mcpUrl, authorizationCode: code, fetchFn: freshFetch })).toBe('AUTHORIZED');
    expect(scopeOf(provider)).toBe('memory:read');

    const client = new ClientV1({ name: 'step-up-v1', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(server.mcpUrl), { authProvider: provider, fetch: freshFetch }));
    // 1.x answers the 403 by refreshing, which cannot widen the grant, then gives up.
    await expect(client.callTool({ name: 'remember', arguments: { text: 'Alice grows basil' } })).rejects.toThrow(/403/);
    expect(scopeOf(provider)).toBe('memory:read');
    await client.close();

    // The host asks again for the wider scope with the same registration: consent, then a token with both.
    provider.invalidateCredentials('tokens');
    provider.authorizationUrl = undefined;
    expect(await authV1(provider, { serverUrl: server.mcpUrl, scope: 'memory:read memory:write', fetchFn: freshFetch })).toBe('REDIRECT');
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(registeredAs);
    const stepUp = await authorizeInBrowser(browser, callbacks, provider.authorizationUrl!, ALICE);
    expect(stepUp.searchParams.get('error')).toBeNull();
    expect(await authV1(provider, { serverUrl: server.mcpUrl, authorizationCode: stepUp.searchParams.get('code')!, fetchFn: freshFetch })).toBe(
      'AUTHORIZED',
    );
    expect(new Set(scopeOf(provider).split(' '))).toEqual(new Set(['memory:read', 'memory:write']));
    expect(clientIdOf(provider)).toBe(registeredAs);

    const again = new ClientV1({ name: 'step-up-v1', version: '1.0.0' });
    await again.connect(new TransportV1(new URL(server.mcpUrl), { authProvider: provider, fetch: freshFetch }));
    expect((await again.callTool({ name: 'remember', arguments: { text: 'Alice grows basil' } })).isError).toBeFalsy();
    await again.close();
  });

  it('the consent page of a step-up names exactly the scope being added', async () => {
    // Same browser, signed in, memory:read already granted to a fresh registration by the first login above.
    const provider = new MemoryOAuthProvider(callbacks.redirectUri, 'consent check', undefined, 'memory:read');
    expect(await authV1(provider, { serverUrl: server.mcpUrl, scope: 'memory:read', fetchFn: freshFetch })).toBe('REDIRECT');
    const first = await authorizeInBrowser(browser, callbacks, provider.authorizationUrl!, ALICE);
    expect(await authV1(provider, { serverUrl: server.mcpUrl, authorizationCode: first.searchParams.get('code')!, fetchFn: freshFetch })).toBe('AUTHORIZED');
    provider.invalidateCredentials('tokens');
    expect(await authV1(provider, { serverUrl: server.mcpUrl, scope: 'memory:read memory:write', fetchFn: freshFetch })).toBe('REDIRECT');
    await browser.page.goto(String(provider.authorizationUrl));
    await browser.page.waitForSelector('button[value=allow]');
    expect(await consentScopes()).toBe('Add, correct and forget memories');
  });
});
