import type { Browser as ChromiumBrowser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSkipReason, launchChromium } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { screenshot } from '../helpers/web-page.js';
import { startExternalIssuer, type ExternalIssuer } from '../oauth/external-issuer.js';
import { SpaceService, SUBJECTS_AS_NAMES } from '../../src/spaces/space-service.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const WEB_CLIENT = { clientId: 'memory-web', clientSecret: 'memory-web-secret-memory-web-secret' };

/**
 * The page with an external authorization server (a second real oidc-provider, as Keycloak or Auth0 would be):
 * an OpenID Connect login, authorization code with PKCE, as the confidential client the operator configured.
 */
describe.skipIf(skip !== undefined).each(engines)('the web page with an external authorization server on %s', (engine) => {
  let external: ExternalIssuer;
  let server: TestServer;
  let chromium: ChromiumBrowser;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    external = await startExternalIssuer({ defaultResource: `${base}/mcp`, webClient: { ...WEB_CLIENT, redirectUri: `${base}/auth/callback` } });
    server = await startTestServer({
      engine,
      port,
      env: {
        MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer,
        MEMORY_SERVICE_WEB_CLIENT_ID: WEB_CLIENT.clientId,
        MEMORY_SERVICE_WEB_CLIENT_SECRET: WEB_CLIENT.clientSecret,
        MEMORY_SERVICE_OAUTH_MEMBERSHIP_CLAIM: 'groups',
      },
    });
    chromium = await launchChromium();
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await external?.close();
  });

  const signIn = async (login: string) => {
    const context = await chromium.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.click('a.button:has-text("Sign in")');
    // The external server's own login page, on its own origin.
    await page.waitForURL(`${external.issuer}/interaction/**`);
    await screenshot(page, `${engine}-external-login`);
    await page.fill('input[name=login]', login);
    await page.fill('input[name=password]', 'anything');
    await page.click('button[type=submit]');
    await page.waitForLoadState();
    if (page.url().startsWith(external.issuer)) await page.click('button[type=submit]');
    return { context, page };
  };

  it('signs in through the external server; the page shows the memories a token of that server reaches', async () => {
    // The robot's client-credentials token carries sub "robot", the name signed in with below.
    const token = await external.token();
    expect((await server.call(token, 'remember', { text: 'The robot charges at night', tags: ['power'] })).isError).toBe(false);
    const { context, page } = await signIn('robot');
    await page.waitForURL(`${server.url}/`);
    expect(await page.locator('ol.memories .memory-text').allTextContents()).toEqual(['The robot charges at night']);
    const session = (await context.cookies(server.url)).find((cookie) => cookie.name === 'memory-session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    await screenshot(page, `${engine}-external-memories`);
    await context.close();
  });

  it('shows another login nothing of the robot', async () => {
    const { context, page } = await signIn('erin');
    await page.waitForURL(`${server.url}/`);
    expect(await page.locator('ol.memories').count()).toBe(0);
    expect(await page.content()).not.toContain('charges at night');
    const exported = await (await page.request.get(`${server.url}/data/export`)).text();
    expect(exported.trimEnd().split('\n')).toHaveLength(1);
    await context.close();
  });

  it('shows a space reached through the sign-in token\'s group, read-only for a reader, and not once the group is gone', async () => {
    const spaces = new SpaceService(server.service.db, SUBJECTS_AS_NAMES);
    const household = await spaces.create('robot', 'Household');
    await spaces.setGroup('robot', household.id, { name: 'household', role: 'reader' });
    const robot = await external.token();
    expect((await server.call(robot, 'remember', { text: 'The bins go out on Tuesday', space: household.id })).isError).toBe(false);
    // The page's own tokens (its client's) carry the group, as a directory would for erin.
    external.setGroups(WEB_CLIENT.clientId, ['household']);
    try {
      const { context, page } = await signIn('erin');
      await page.waitForURL(`${server.url}/`);
      await page.goto(`${server.url}/spaces`);
      expect(await page.content()).toContain('Household');
      await page.goto(`${server.url}/?space=${encodeURIComponent(household.id)}`);
      expect(await page.locator('ol.memories .memory-text').allTextContents()).toEqual(['The bins go out on Tuesday']);
      // A reader: no control that changes the space's memories.
      expect(await page.locator('form[action*="/forget"]').count()).toBe(0);
      await context.close();
    } finally {
      external.setGroups(WEB_CLIENT.clientId, undefined);
    }
    // A new sign-in without the group reaches nothing of it.
    const { context, page } = await signIn('erin');
    await page.waitForURL(`${server.url}/`);
    const response = await page.request.get(`${server.url}/?space=${encodeURIComponent(household.id)}`);
    expect(response.status()).toBe(404);
    expect(await response.text()).not.toContain('bins go out');
    await context.close();
  });

  it('says so when the operator configured a wrong client secret', async () => {
    const { dataDir, schema } = server;
    const port = Number(new URL(server.url).port);
    await server.close({ keepData: true });
    server = await startTestServer({
      engine,
      port,
      schema,
      dataDir,
      env: {
        MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer,
        MEMORY_SERVICE_WEB_CLIENT_ID: WEB_CLIENT.clientId,
        MEMORY_SERVICE_WEB_CLIENT_SECRET: 'not-the-secret-of-this-client',
      },
    });
    const { context, page } = await signIn('robot');
    await page.waitForURL(`${server.url}/auth/callback?**`);
    expect(await page.locator('h1').textContent()).toBe('Sign-in failed');
    expect(await page.locator('main p').first().textContent()).toBe(
      "Sign-in failed: the authorization server refused this service's client (invalid_client); its operator should check the page's client id and secret.",
    );
    expect((await context.cookies(server.url)).find((cookie) => cookie.name === 'memory-session')).toBeUndefined();
    await context.close();
  });
});

describe('the web page is off', () => {
  it('without any authorization server, and with an external one but no client for the page', async () => {
    const external = await startExternalIssuer({ defaultResource: 'http://127.0.0.1:1/mcp' });
    const unconfigured = await startTestServer({ engine: 'pglite', iniFile: 'LogLevel = silent\n' });
    const noClient = await startTestServer({ engine: 'pglite', env: { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer } });
    try {
      for (const [server, reason] of [
        [unconfigured, 'no authorization server is configured (OAuthAuthorizationServer).'],
        [noClient, 'the external authorization server needs a client for it (WebClientId, MEMORY_SERVICE_WEB_CLIENT_SECRET).'],
      ] as const) {
        const response = await fetch(`${server.url}/`);
        expect(response.status).toBe(404);
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(await response.text()).toContain(`This service&#39;s web page is not enabled: ${reason}`);
        expect((await fetch(`${server.url}/auth/sign-in`)).status).toBe(404);
      }
    } finally {
      await unconfigured.close();
      await noClient.close();
      await external.close();
    }
  });
});
