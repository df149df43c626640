import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { tokenIssueCommand } from '../../src/cli/token-issue.js';
import { SpaceService, SUBJECTS_AS_NAMES, type PeopleDirectory } from '../../src/spaces/space-service.js';
import type { AccessibleSpace } from '../../src/spaces/spaces.js';
import { browserSkipReason, launchBrowser, startCallbackServer, submitLogin } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { startExternalIssuer, type ExternalIssuer } from './external-issuer.js';
import { codeRequest, registerClient, signInWithForms, tokenRequest, type TokenResponse } from './oauth-client.js';

const BOB = { username: 'bob', password: 'bob-has-a-long-password' };
const CAROL = { username: 'carol', password: 'carol-has-a-long-password' };
/** Never called: the sign-in stops when the browser would go there. */
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

const people = (users: UserStore): PeopleDirectory => ({
  subjectOf: (name) => users.findByName(name)?.id,
  nameOf: (subject) => users.findById(subject)?.name,
});

type Call = { isError: boolean; structured: Record<string, unknown> };
const errorCode = (result: Call): string | undefined => (result.structured.error as { code?: string } | undefined)?.code;
const spaceNames = (result: Call): string[] => (result.structured.spaces as { name: string }[]).map((space) => space.name);

/**
 * Tokens limited to spaces, end to end with real JWTs: the built-in server's consent page (spaces named, a choice
 * among them), its code and refresh grants, /mcp answering as the database's row-level security decides.
 */
describe.each(engines)('tokens limited to spaces (built-in authorization server) on %s', (engine) => {
  let server: TestServer;
  let users: UserStore;
  let spaces: SpaceService;
  let clientId: string;
  let bob: string;
  let carol: string;
  let family: AccessibleSpace;
  let work: AccessibleSpace;
  let carolsOwn: AccessibleSpace;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    users = new UserStore(usersFilePath(server.config.dataDir));
    bob = (await users.add(BOB.username, BOB.password)).id;
    carol = (await users.add(CAROL.username, CAROL.password)).id;
    spaces = new SpaceService(server.service.db, people(users));
    family = await spaces.create(bob, 'Family');
    work = await spaces.create(bob, 'Work');
    await spaces.share(bob, family.id, 'carol', 'writer');
    carolsOwn = await spaces.create(carol, 'Carol only');
    const registered = await registerClient(server.url, { client_name: 'Spaces test', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    clientId = registered.body.client_id!;
  });
  afterAll(async () => {
    await server?.close();
  });

  const authorize = async (
    credentials: typeof BOB,
    params: Record<string, string> = {},
    options: Parameters<typeof signInWithForms>[2] = {},
  ): Promise<{ callback: URL; verifier: string }> => {
    const { url, verifier } = codeRequest(server.url, { client_id: clientId, redirect_uri: REDIRECT_URI, state: 'spaces', ...params });
    return { callback: await signInWithForms(url, credentials, options), verifier };
  };

  const tokensFor = async (...args: Parameters<typeof authorize>): Promise<TokenResponse['body'] & { access_token: string; refresh_token: string; scope: string }> => {
    const { callback, verifier } = await authorize(...args);
    const code = callback.searchParams.get('code');
    expect(code, callback.href).not.toBeNull();
    const params = args[1] ?? {};
    const tokens = await tokenRequest(server.url, {
      grant_type: 'authorization_code',
      code: code!,
      code_verifier: verifier,
      redirect_uri: params.redirect_uri ?? REDIRECT_URI,
      client_id: params.client_id ?? clientId,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    return tokens.body as TokenResponse['body'] & { access_token: string; refresh_token: string; scope: string };
  };

  const refresh = (refreshToken: string, client = clientId) => tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client });
  const consentPageOf = (pages: readonly string[]) => pages.find((html) => html.includes('Allow access?'));

  it('names every space of the person on the consent page; allowing all of them (the default) gives a token without a limit, as before', async () => {
    const pages: string[] = [];
    const tokens = await tokensFor(BOB, {}, { pages });
    const consent = consentPageOf(pages)!;
    expect(consent).toContain('All my spaces');
    for (const name of ['Personal', 'Family', 'Work']) expect(consent).toContain(`> ${name} <span class="muted">`);
    expect(consent).toContain(`value="${family.id}"`);
    expect(consent).toContain('value="space:personal"');
    expect(consent).not.toContain('Carol only');
    expect(tokens.scope).toBe('memory:read memory:write');
    expect(decodeJwt(tokens.access_token).scope).toBe('memory:read memory:write');
    expect(spaceNames(await server.call(tokens.access_token, 'spaces', {}))).toEqual(['Personal', 'Family', 'Work']);
  });

  it.skipIf(browserSkipReason() !== undefined)('shows the spaces by name in a real browser, and a box ticked there limits the token', async () => {
    const browser = await launchBrowser();
    const callbacks = await startCallbackServer();
    try {
      const registered = await registerClient(server.url, { client_name: 'Browser app', redirect_uris: [callbacks.redirectUri], token_endpoint_auth_method: 'none' });
      const { url, verifier } = codeRequest(server.url, { client_id: registered.body.client_id!, redirect_uri: callbacks.redirectUri, state: 'browser' });
      const { page } = browser;
      const callback = callbacks.next();
      await page.goto(url.href);
      expect((await submitLogin(page, BOB)).status()).toBeLessThan(400);
      await page.waitForSelector('fieldset');
      const labels = (await page.locator('fieldset label').allTextContents()).map((text) => text.trim());
      expect(labels).toEqual([
        'All my spaces, including ones I join later',
        'Only these:',
        'Personal (yours)',
        'Family (yours)',
        'Work (yours)',
      ]);
      expect(await page.isChecked('input[name=spaces][value=all]')).toBe(true);
      // Ticking a space is enough, even with "All my spaces" still selected.
      await page.check(`input[name=space][value="${family.id}"]`);
      await page.click('button[value=allow]');
      const code = (await callback).searchParams.get('code')!;
      const tokens = await tokenRequest(server.url, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: callbacks.redirectUri, client_id: registered.body.client_id! });
      expect(tokens.body.scope).toBe(`memory:read memory:write ${family.id}`);
      expect(spaceNames(await server.call(tokens.body.access_token!, 'spaces', {}))).toEqual(['Family']);
    } finally {
      await browser.close();
      await callbacks.close();
    }
  });

  it('limits a token to the spaces ticked on the consent page: it reads and writes only there, the unlimited token everywhere, and refresh keeps the limit', async () => {
    const unlimited = (await tokensFor(BOB)).access_token;
    const inWork = await server.call(unlimited, 'remember', { text: 'The quarterly review is on Thursday', space: 'Work' });
    expect(inWork.isError, JSON.stringify(inWork.structured)).toBe(false);
    const workMemory = inWork.structured.memory_id as number;
    expect((await server.call(unlimited, 'remember', { text: 'My bike lock code is in the drawer' })).isError).toBe(false);

    const tokens = await tokensFor(BOB, {}, { consent: [['spaces', 'some'], ['space', family.id]] });
    expect(tokens.scope).toBe(`memory:read memory:write ${family.id}`);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: bob, scope: `memory:read memory:write ${family.id}` });
    const limited = tokens.access_token;

    const remembered = await server.call(limited, 'remember', { text: 'The family dinner is on Sundays at six', space: 'Family' });
    expect(remembered.isError, JSON.stringify(remembered.structured)).toBe(false);
    expect(remembered.structured.space).toEqual({ id: family.id, name: 'Family' });
    expect(JSON.stringify((await server.call(limited, 'recall', { query: 'When is the family dinner?', space: 'Family' })).structured)).toContain('Sundays at six');
    expect(spaceNames(await server.call(limited, 'spaces', {}))).toEqual(['Family']);

    // Another space of the same person: as if it did not exist.
    expect(errorCode(await server.call(limited, 'recall', { query: 'quarterly review', space: 'Work' }))).toBe('NOT_FOUND');
    expect(errorCode(await server.call(limited, 'recall', { query: 'quarterly review', space: ['Family', work.id] }))).toBe('NOT_FOUND');
    expect(errorCode(await server.call(limited, 'list_memories', { space: work.id }))).toBe('NOT_FOUND');
    expect(errorCode(await server.call(limited, 'remember', { text: 'Budget meeting moved', space: 'Work' }))).toBe('NOT_FOUND');
    expect(errorCode(await server.call(limited, 'forget', { memory_id: workMemory }))).toBe('NOT_FOUND');
    // The personal space: the token was not allowed there.
    expect(errorCode(await server.call(limited, 'recall', { query: 'bike lock' }))).toBe('FORBIDDEN');
    expect(errorCode(await server.call(limited, 'list_memories', {}))).toBe('FORBIDDEN');
    expect(errorCode(await server.call(limited, 'remember', { text: 'A personal note' }))).toBe('FORBIDDEN');

    // The same person's unlimited token reaches them all.
    expect(JSON.stringify((await server.call(unlimited, 'recall', { query: 'quarterly review', space: 'Work' })).structured)).toContain('Thursday');
    expect((await server.call(unlimited, 'list_memories', { space: work.id })).isError).toBe(false);
    expect(JSON.stringify((await server.call(unlimited, 'recall', { query: 'bike lock' })).structured)).toContain('drawer');
    expect((await server.call(unlimited, 'recall', { query: 'family dinner', space: ['Family', 'Work', 'personal'] })).isError).toBe(false);

    const refreshed = await refresh(tokens.refresh_token);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.scope).toBe(`memory:read memory:write ${family.id}`);
    expect(decodeJwt(refreshed.body.access_token!).scope).toBe(`memory:read memory:write ${family.id}`);
    expect(errorCode(await server.call(refreshed.body.access_token!, 'recall', { query: 'quarterly review', space: 'Work' }))).toBe('NOT_FOUND');
    expect((await server.call(refreshed.body.access_token!, 'recall', { query: 'family dinner', space: 'Family' })).isError).toBe(false);

    // A refresh naming a narrower scope keeps at least one of its spaces: leaving them all out would reach every space.
    const narrower = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token!, client_id: clientId, scope: `memory:read ${family.id}` });
    expect(narrower.status, JSON.stringify(narrower.body)).toBe(200);
    expect(narrower.body.scope).toBe(`memory:read ${family.id}`);
    const widened = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: narrower.body.refresh_token!, client_id: clientId, scope: 'memory:read memory:write' });
    expect(widened.status).toBe(400);
    expect(widened.body.error).toBe('invalid_scope');
    expect(widened.body).not.toHaveProperty('access_token');
  });

  it('asks again when "only these" is chosen with none ticked', async () => {
    const pages: string[] = [];
    await expect(authorize(BOB, {}, { pages, consent: [['spaces', 'some']] })).rejects.toThrow(/answered HTTP 400/);
  });

  it('names the spaces a client asks for by scope, and refuses one the person is not a member of', async () => {
    const pages: string[] = [];
    const tokens = await tokensFor(BOB, { scope: `memory:read ${family.id}` }, { pages });
    const consent = consentPageOf(pages)!;
    expect(consent).toContain('Only in this space');
    expect(consent).toContain('Family');
    expect(consent).not.toContain('All my spaces');
    expect(consent).not.toContain('Work');
    expect(tokens.scope).toBe(`memory:read ${family.id}`);
    expect((await server.call(tokens.access_token, 'recall', { query: 'family dinner', space: family.id })).isError).toBe(false);

    // Spaces alone ask for the memories in them.
    expect((await tokensFor(BOB, { scope: 'space:personal' })).scope).toBe('memory:read memory:write space:personal');

    const refusedPages: string[] = [];
    const refused = await authorize(BOB, { scope: `memory:read memory:write ${carolsOwn.id}` }, { pages: refusedPages });
    expect(refused.callback.searchParams.get('error')).toBe('invalid_scope');
    expect(refused.callback.searchParams.get('code')).toBeNull();
    const refusal = consentPageOf(refusedPages)!;
    expect(refusal).toContain('not a member of');
    expect(refusal).not.toContain('value="allow"');
    expect(refusal).not.toContain('Carol only');

    // A space's name is no scope: refused before anyone signs in, rather than dropped (which would reach every space).
    const byName = await authorize(BOB, { scope: 'memory:read space:Family' });
    expect(byName.callback.searchParams.get('error')).toBe('invalid_scope');
  });

  it('keeps the spaces chosen when the same browser signs in again, and a new choice leaves earlier refresh tokens as they were', async () => {
    // A web application (https callback): oidc-provider asks no consent again once everything asked is granted.
    const web = await registerClient(server.url, { client_name: 'Web app', redirect_uris: ['https://app.example/callback'], token_endpoint_auth_method: 'none' });
    const asWeb = { client_id: web.body.client_id!, redirect_uri: 'https://app.example/callback' };
    const cookies = new Map<string, string>();
    const first = await tokensFor(BOB, asWeb, { cookies, consent: [['spaces', 'some'], ['space', work.id]] });
    expect(first.scope).toBe(`memory:read memory:write ${work.id}`);

    const pages: string[] = [];
    const again = await tokensFor(BOB, asWeb, { cookies, pages });
    expect(consentPageOf(pages)).toBeUndefined();
    expect(again.scope).toBe(`memory:read memory:write ${work.id}`);
    expect(errorCode(await server.call(again.access_token, 'recall', { query: 'family dinner', space: 'Family' }))).toBe('NOT_FOUND');

    // The person allows every space this time: new tokens have no limit, the earlier refresh token keeps its one.
    const all = await tokensFor(BOB, { ...asWeb, prompt: 'consent' }, { cookies });
    expect(all.scope).toBe('memory:read memory:write');
    const refreshed = await refresh(first.refresh_token, asWeb.client_id);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.scope).toBe(`memory:read memory:write ${work.id}`);
    expect(errorCode(await server.call(refreshed.body.access_token!, 'recall', { query: 'bike lock' }))).toBe('FORBIDDEN');
  });

  it('shows a native app, which is asked every time, the spaces it was limited to ticked', async () => {
    const cookies = new Map<string, string>();
    await tokensFor(BOB, {}, { cookies, consent: [['spaces', 'some'], ['space', work.id], ['space', 'space:personal']] });
    const pages: string[] = [];
    const again = await tokensFor(BOB, {}, { cookies, pages, consent: [['spaces', 'some'], ['space', work.id]] });
    const consent = consentPageOf(pages)!;
    expect(consent).toContain('value="some" checked');
    expect(consent).toContain(`value="${work.id}" checked`);
    expect(consent).toContain('value="space:personal" checked');
    expect(consent).not.toContain(`value="${family.id}" checked`);
    expect(again.scope).toBe(`memory:read memory:write ${work.id}`);
  });

  it("ends an issued token's access to a space at once when its holder is removed from it", async () => {
    const limited = (await tokensFor(CAROL, { scope: family.id })).access_token;
    const unlimited = (await tokensFor(CAROL)).access_token;
    for (const token of [limited, unlimited]) {
      expect(JSON.stringify((await server.call(token, 'recall', { query: 'family dinner', space: 'Family' })).structured)).toContain('Sundays at six');
    }
    expect((await server.call(limited, 'remember', { text: 'Grandma visits in May', space: 'Family' })).isError).toBe(false);

    await spaces.removeMember(bob, family.id, carol);
    for (const token of [limited, unlimited]) {
      expect(errorCode(await server.call(token, 'recall', { query: 'family dinner', space: 'Family' }))).toBe('NOT_FOUND');
      expect(errorCode(await server.call(token, 'remember', { text: 'Grandma visits in June', space: family.id }))).toBe('NOT_FOUND');
    }
    expect(spaceNames(await server.call(unlimited, 'spaces', {}))).toEqual(['Personal', 'Carol only']);
    // The limited token reached Family only: now nothing.
    expect(spaceNames(await server.call(limited, 'spaces', {}))).toEqual([]);
  });
});

describe.each(engines)('memory-service token issue --space on %s', (engine) => {
  let server: TestServer;
  let bob: string;
  let family: AccessibleSpace;

  beforeAll(async () => {
    // The command opens the configured database itself: the server runs on it too (its own data folder with PGlite).
    server = await startTestServer({ engine, ownPglite: true });
    const users = new UserStore(usersFilePath(server.config.dataDir));
    bob = (await users.add(BOB.username, BOB.password)).id;
    family = await new SpaceService(server.service.db, people(users)).create(bob, 'Family');
    expect((await server.call(await server.token(bob), 'remember', { text: 'The piano tuner comes in March', space: 'Family' })).isError).toBe(false);
    expect((await server.call(await server.token(bob), 'remember', { text: 'My dentist is Dr Ortega' })).isError).toBe(false);
  });
  afterAll(async () => {
    await server?.close();
  });

  const issue = async (space: string[]): Promise<string> => {
    let stdout = '';
    const io = { stdout: { write: (chunk: string) => ((stdout += chunk), true) }, stderr: { write: () => true } } as unknown as Parameters<typeof tokenIssueCommand>[2];
    expect(await tokenIssueCommand(server.config, { user: 'bob', sub: undefined, scope: undefined, ttl: undefined, space }, io)).toBe(0);
    return stdout.trim();
  };

  it('writes the spaces named (by name through the database, by id, or personal) into the token', async () => {
    const { dataDir, schema } = server;
    const port = Number(new URL(server.url).port);
    // The embedded database is the running server's alone: stop it, as an operator would.
    await server.close({ keepData: true });
    const byName = await issue(['family']);
    const byIdAndPersonal = await issue([family.id, 'Personal']);
    await expect(issue(['Holidays'])).rejects.toThrow('token issue: --space: space "Holidays" not found');
    await expect(issue(['space:Family'])).rejects.toThrow('not found');
    server = await startTestServer({ engine, ownPglite: true, dataDir, schema, port });

    expect(decodeJwt(byName)).toMatchObject({ sub: bob, scope: `memory:read memory:write ${family.id}` });
    expect(decodeJwt(byIdAndPersonal).scope).toBe(`memory:read memory:write ${family.id} space:personal`);
    expect(JSON.stringify((await server.call(byName, 'recall', { query: 'piano tuner', space: 'Family' })).structured)).toContain('March');
    expect(errorCode(await server.call(byName, 'recall', { query: 'dentist' }))).toBe('FORBIDDEN');
    expect(JSON.stringify((await server.call(byIdAndPersonal, 'recall', { query: 'dentist' })).structured)).toContain('Ortega');
  });
});

describe.each(engines)('membership by an external authorization server\'s groups claim on %s', (engine) => {
  let external: ExternalIssuer;
  let server: TestServer;
  let spaces: SpaceService;
  let team: AccessibleSpace;

  beforeAll(async () => {
    const port = await freePort();
    external = await startExternalIssuer({ defaultResource: `http://127.0.0.1:${port}/mcp` });
    server = await startTestServer({
      engine,
      port,
      env: { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: external.issuer, MEMORY_SERVICE_OAUTH_MEMBERSHIP_CLAIM: 'groups' },
    });
    // With an external server people are their subjects: the robot client's tokens carry sub "robot".
    spaces = new SpaceService(server.service.db, SUBJECTS_AS_NAMES);
    team = await spaces.create('robot', 'Team');
    await spaces.setGroup('robot', team.id, { name: 'staff', role: 'reader' });
    const owner = await external.token();
    expect((await server.call(owner, 'remember', { text: 'Deploys are frozen on Fridays', space: 'Team' })).isError).toBe(false);
  });
  afterAll(async () => {
    await server?.close();
    await external?.close();
  });

  it("grants the space's external role to a token whose groups claim carries its group, and a new token without it has none", async () => {
    const outsider = await external.token({ client: 'helper' });
    expect(errorCode(await server.call(outsider, 'recall', { query: 'deploys', space: team.id }))).toBe('NOT_FOUND');
    expect(spaceNames(await server.call(outsider, 'spaces', {}))).toEqual(['Personal']);

    external.setGroups('helper', ['engineering', 'staff']);
    const staff = await external.token({ client: 'helper' });
    expect(decodeJwt(staff)).toMatchObject({ sub: 'helper', groups: ['engineering', 'staff'] });
    expect(JSON.stringify((await server.call(staff, 'recall', { query: 'When are deploys frozen?', space: team.id })).structured)).toContain('Fridays');
    expect((await server.call(staff, 'spaces', {})).structured.spaces).toEqual([
      { id: 'personal', name: 'Personal', role: 'owner', personal: true },
      { id: team.id, name: 'Team', role: 'reader', personal: false },
    ]);
    expect(errorCode(await server.call(staff, 'remember', { text: 'Deploys resume on Monday', space: 'Team' }))).toBe('FORBIDDEN');

    // The owner makes the group writers: the same token may write at once.
    await spaces.setGroup('robot', team.id, { name: 'staff', role: 'writer' });
    expect((await server.call(staff, 'remember', { text: 'Deploys resume on Monday', space: 'Team' })).isError).toBe(false);

    // Out of the group at the authorization server: the next token has no claim, and no access.
    external.setGroups('helper', undefined);
    const after = await external.token({ client: 'helper' });
    expect(decodeJwt(after)).not.toHaveProperty('groups');
    expect(errorCode(await server.call(after, 'recall', { query: 'deploys', space: team.id }))).toBe('NOT_FOUND');
    // Another group's name grants nothing.
    external.setGroups('helper', ['Staff', 'staff-alumni']);
    expect(errorCode(await server.call(await external.token({ client: 'helper' }), 'recall', { query: 'deploys', space: 'Team' }))).toBe('NOT_FOUND');
  });
});
