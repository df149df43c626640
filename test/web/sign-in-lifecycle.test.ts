import type { Browser as ChromiumBrowser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { authorizeInBrowser, browserSkipReason, launchChromium, startCallbackServer, type CallbackServer, type Credentials } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { signInOnPage } from '../helpers/web-page.js';
import { authorizationUrl, pkce, registerClient, tokenRequest } from '../oauth/oauth-client.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE: Credentials = { username: 'alice', password: 'alice keeps bees on the roof' };
const BOB: Credentials = { username: 'bob', password: 'bob collects old maps' };
const CAROL: Credentials = { username: 'carol', password: 'carol reads in the park' };

/**
 * The sign-in lifecycle across the page and the built-in authorization server, in a real browser: signing out of
 * the page ends the server's own sign-in too, "delete all my data" revokes every token, and a changed password or
 * a removed user leads a stale browser to the sign-in form.
 */
describe.skipIf(skip !== undefined).each(engines)('the sign-in lifecycle on %s', (engine) => {
  let server: TestServer;
  let users: UserStore;
  let chromium: ChromiumBrowser;
  let callbacks: CallbackServer;
  let clientId: string;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    users = new UserStore(usersFilePath(server.config.dataDir));
    for (const { username, password } of [ALICE, BOB, CAROL]) await users.add(username, password);
    chromium = await launchChromium();
    callbacks = await startCallbackServer();
    const registered = await registerClient(server.url, { client_name: 'Lifecycle client', redirect_uris: [callbacks.redirectUri], token_endpoint_auth_method: 'none' });
    clientId = registered.body.client_id!;
  }, 120_000);
  afterAll(async () => {
    await callbacks?.close();
    await chromium?.close();
    await server?.close();
  });

  const signedIn = async (credentials: Credentials): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await chromium.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signInOnPage(page, server.url, credentials);
    return { context, page };
  };

  /** An MCP client's authorization request, as a connector would start it. */
  const connectRequest = () => {
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(server.url, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbacks.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: `state-${Math.random()}`,
      resource: server.mcpUrl,
      scope: 'memory:read memory:write',
    });
    return { url, verifier };
  };

  /** Where a browser lands when it starts connecting a client: the password form, or (still signed in) the consent page. */
  const connectLandsOn = async (page: Page): Promise<{ status: number; asksPassword: boolean }> => {
    const response = await page.goto(connectRequest().url.href);
    await page.waitForLoadState();
    return { status: response!.status(), asksPassword: (await page.locator('#password').count()) === 1 };
  };

  const mcpStatus = async (token: string) =>
    (await server.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_memories', arguments: {} } }, { authorization: `Bearer ${token}` })).status;

  it("signing out of the page ends the authorization server's session: connecting a client asks for the password again", async () => {
    const { context, page } = await signedIn(ALICE);
    try {
      // Signed in, the server remembers this browser: a new client needs only a click.
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: false });
      await page.goto(`${server.url}/`);
      await page.click('button:has-text("Sign out")');
      await page.waitForURL(/signed-out/);
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: true });
    } finally {
      await context.close();
    }
  });

  it('deleting all data revokes every access token, refresh token and sign-in of the person, and only theirs', async () => {
    const { context, page } = await signedIn(BOB);
    try {
      const { url, verifier } = connectRequest();
      const callback = await authorizeInBrowser({ context, page, close: async () => undefined }, callbacks, url, BOB);
      const tokens = await tokenRequest(server.url, {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: callbacks.redirectUri,
        client_id: clientId,
        code_verifier: verifier,
      });
      expect(tokens.status).toBe(200);
      const { access_token: access, refresh_token: refresh } = tokens.body;
      const bobId = users.findByName('bob')!.id;
      const issued = await server.token(bobId);
      const carolToken = await server.token(users.findByName('carol')!.id);
      expect(await mcpStatus(access!)).toBe(200);
      expect(await mcpStatus(issued)).toBe(200);
      await server.call(access!, 'remember', { text: 'Bob keeps his maps in a cedar chest' });

      await page.goto(`${server.url}/data/delete`);
      await page.fill('#confirm', 'delete');
      await page.click('button:has-text("Delete everything")');
      await page.waitForURL(`${server.url}/?deleted=1`);

      expect(await mcpStatus(access!)).toBe(401);
      expect(await mcpStatus(issued)).toBe(401);
      const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: refresh!, client_id: clientId });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: true });
      // Nobody else's tokens are touched.
      expect(await mcpStatus(carolToken)).toBe(200);
      // A token issued after the revocation (from the next second on) works: the person can connect again.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await mcpStatus(await server.token(bobId))).toBe(200);
    } finally {
      await context.close();
    }
  });

  it('after a password change or the removal of the user, a stale browser gets the sign-in form, never an error', async () => {
    const { context, page } = await signedIn(CAROL);
    try {
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: false });
      // A sign-in within a second of a password change counts as after it (clocks of the file and the database).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await users.setPassword('carol', 'carol now reads at home');
      for (const path of ['/', '/history']) {
        const response = await page.goto(`${server.url}${path}`);
        expect(response!.status(), path).toBeLessThan(400);
      }
      expect(page.url()).toContain('/oauth/interaction/');
      expect(await page.locator('#password').count()).toBe(1);
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: true });

      // Signed in again with the new password, then removed.
      await signInOnPage(page, server.url, { username: 'carol', password: 'carol now reads at home' });
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: false });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      users.remove('carol');
      const home = await page.goto(`${server.url}/history`);
      expect(home!.status()).toBeLessThan(400);
      expect(await page.locator('#password').count()).toBe(1);
      expect(await connectLandsOn(page)).toEqual({ status: 200, asksPassword: true });
    } finally {
      await context.close();
    }
  });
});
