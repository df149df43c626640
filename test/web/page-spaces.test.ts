import type { APIResponse, Browser as ChromiumBrowser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { SpaceService } from '../../src/spaces/space-service.js';
import { browserSkipReason, launchChromium, type Credentials } from '../helpers/browser.js';
import { engines, type Engine } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { csrfOf, readAsOwner, screenshot, seriousViolations, signInOnPage } from '../helpers/web-page.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const PEOPLE = {
  alice: { username: 'alice', password: 'alice keeps bees on the roof' },
  bob: { username: 'bob', password: 'bob collects old maps' },
  carol: { username: 'carol', password: 'carol sings in a choir' },
  dave: { username: 'dave', password: 'dave flies kites on sundays' },
  erin: { username: 'erin', password: 'erin repairs old clocks' },
} satisfies Record<string, Credentials>;
type Name = keyof typeof PEOPLE;

/** Many sign-ins, requests and embeddings in a real browser: more than the default on a busy machine. */
const LONG_TEST_MS = 240_000;

interface Person {
  readonly id: string;
  readonly token: string;
  readonly context: BrowserContext;
  readonly page: Page;
}

/** Everything stored under a space's key, read by the database owner: what a refused request must leave as it was. */
async function spaceRows(server: TestServer, engine: Engine, key: string): Promise<string> {
  return JSON.stringify(
    await readAsOwner(engine, async (query) => {
      const table = (name: string, columns: string, where: string) => query(`select ${columns} from "${server.schema}".${name} where ${where} order by 1, 2`, [key]);
      return {
        memories: await table('memories', 'id, text, tags, importance, last_confirmed_at, updated_at', 'subject = $1'),
        restatements: await table('memory_restatements', 'id, text', 'subject = $1'),
        tombstones: await table('tombstones', 'id, memory_id, note', 'subject = $1'),
        space: await table('spaces', 'id, name, owner, external_group, external_role', 'id = $1'),
        members: await table('space_members', 'member, role', 'space_id = $1'),
      };
    }),
  );
}

describe.skipIf(skip !== undefined).each(engines)('spaces on the web page on %s', (engine) => {
  let server: TestServer;
  let chromium: ChromiumBrowser;
  let users: UserStore;
  /** The service itself, to set up spaces for the matrix (the page's own forms are tested one by one below). */
  let spaces: SpaceService;
  const people = {} as Record<Name, Person>;
  let family = '';
  /** The matrix's space, kept for the accessibility check after it. */
  let matrix = '';

  const texts = (page: Page) => page.locator('ol.memories .memory-text').allTextContents();
  const remember = async (who: Name, text: string, space: string, extra: Record<string, unknown> = {}) => {
    const { isError, structured } = await server.call(people[who].token, 'remember', { text, space, dedup_policy: 'insert', ...extra });
    expect(isError, JSON.stringify(structured)).toBe(false);
    return structured.memory_id as number;
  };
  const listed = async (who: Name, space: string) => {
    const { isError, structured } = await server.call(people[who].token, 'list_memories', { space, limit: 100 });
    return isError ? structured : (structured.memories as { memory_id: number; text: string; restatements: { restatement_id: number }[] }[]);
  };
  /** A request from `who`'s browser (their cookie), not following redirects. */
  const post = async (who: Name, path: string, fields: Record<string, string>) =>
    people[who].page.request.post(`${server.url}${path}`, { form: { csrf: await csrfOf(people[who].page), ...fields }, maxRedirects: 0 });
  const get = (who: Name, path: string) => people[who].page.request.get(`${server.url}${path}`, { maxRedirects: 0 });
  const importFile = async (who: Name, space: string, text: string) =>
    people[who].page.request.post(`${server.url}/data/import`, {
      multipart: { csrf: await csrfOf(people[who].page), space, file: { name: 'import.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(text) } },
      maxRedirects: 0,
    });
  const snapshot = (key: string) => spaceRows(server, engine, key);
  const shot = (page: Page, name: string) => screenshot(page, `${engine}-spaces-${name}`);

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0', MEMORY_SERVICE_OAUTH_MEMBERSHIP_CLAIM: 'groups' },
      compose: { webSignInPerMinute: 1000 },
    });
    users = new UserStore(usersFilePath(server.config.dataDir));
    spaces = new SpaceService(server.service.db, { subjectOf: (name) => users.findByName(name)?.id, nameOf: (id) => users.findById(id)?.name });
    chromium = await launchChromium();
    for (const name of Object.keys(PEOPLE) as Name[]) {
      const { id } = await users.add(PEOPLE[name].username, PEOPLE[name].password);
      const context = await chromium.newContext();
      context.setDefaultTimeout(20_000);
      const page = await context.newPage();
      await signInOnPage(page, server.url, PEOPLE[name]);
      people[name] = { id, token: await server.token(id), context, page };
    }
    await remember('alice', 'Alice keeps her diary in the blue drawer', 'personal');
  }, LONG_TEST_MS);
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it('alice makes "Family" on the page and shares it with bob as writer and carol as reader, by user name', async () => {
    const { page } = people.alice;
    await page.goto(`${server.url}/spaces`);
    expect(await page.locator('ul.spaces li strong').allTextContents()).toEqual(['Personal']);
    // A refused name changes nothing and keeps what was typed.
    await page.fill('#name', 'personal');
    await page.click('button:has-text("Make space")');
    expect(await page.locator('.error').textContent()).toContain('names everyone\'s personal space');
    expect(await page.inputValue('#name')).toBe('personal');
    await page.fill('#name', 'Family');
    await page.click('button:has-text("Make space")');
    await page.waitForURL(/\/spaces\/space:[a-z0-9]{24}\?done=space-made$/);
    family = /\/spaces\/(space:[a-z0-9]{24})/.exec(page.url())![1]!;
    expect(await page.locator('h1').textContent()).toBe('Family');
    for (const [person, role] of [['bob', 'writer'], ['carol', 'reader']] as const) {
      await page.fill('#person', person);
      await page.selectOption('#share-role', role);
      await page.click('button:has-text("Share")');
      await page.waitForURL(/done=shared/);
    }
    expect(await page.locator('ul.members li').allInnerTexts()).toEqual([
      expect.stringMatching(/^alice\s+owner/),
      expect.stringMatching(/^bob\s+writer/),
      expect.stringMatching(/^carol\s+reader/),
    ]);
    // Nobody of that name: a clear error, nothing changed.
    const before = await snapshot(family);
    await page.fill('#person', 'zed');
    await page.click('button:has-text("Share")');
    expect(await page.locator('.error').textContent()).toBe('Not done: user "zed" not found.');
    expect(await snapshot(family)).toBe(before);
    await shot(page, 'owner');
    // The spaces list names each space with the person's role, personal first.
    await people.carol.page.goto(`${server.url}/spaces`);
    expect(await people.carol.page.locator('ul.spaces li').allInnerTexts()).toEqual([expect.stringMatching(/^Personal\s+personal/), expect.stringMatching(/^Family\s+reader/)]);
  }, LONG_TEST_MS);

  it('each member sees and does exactly what their role allows: list, search, edit and forget, import, members', async () => {
    const chores = await remember('alice', 'The family bins go out on Tuesday night', family, { tags: ['chores'] });
    const dentist = await remember('bob', 'The children see the dentist every March', family);
    await remember('bob', 'Bob keeps his spare glasses in the car', 'personal');

    for (const who of ['alice', 'bob', 'carol'] as const) {
      const { page } = people[who];
      await page.goto(`${server.url}/?space=${family}`);
      expect(await page.locator('h1').textContent(), who).toBe('Memories in “Family”');
      expect((await texts(page)).sort(), who).toEqual(['The children see the dentist every March', 'The family bins go out on Tuesday night']);
      // Search is recall in that space only: neither the diary nor bob's glasses, whoever searches.
      await page.fill('#q', 'where is it kept');
      await page.click('form.search button');
      await page.waitForURL(/q=where/);
      expect(page.url(), who).toContain(`space=${encodeURIComponent(family)}`);
      for (const text of await texts(page)) expect(['The children see the dentist every March', 'The family bins go out on Tuesday night'], who).toContain(text);
      // The space selector switches to the personal space.
      await page.selectOption('#space', 'personal');
      await page.click('form.space-bar button');
      await page.waitForURL(/space=personal/);
      expect(await texts(page), who).not.toContain('The family bins go out on Tuesday night');
    }

    // Writers and the owner get every control; the reader none.
    for (const [who, writable] of [['alice', true], ['bob', true], ['carol', false]] as const) {
      const { page } = people[who];
      await page.goto(`${server.url}/?space=${family}`);
      expect(await page.locator(`#memory-${chores} button:has-text("Forget")`).count(), who).toBe(writable ? 1 : 0);
      expect(await page.locator(`#memory-${chores} button:has-text("Still true")`).count(), who).toBe(writable ? 1 : 0);
      await page.goto(`${server.url}/memories/${chores}`);
      expect(await page.locator('#text').count(), who).toBe(writable ? 1 : 0);
      await page.goto(`${server.url}/data?space=${family}`);
      expect(await page.locator('#file').count(), who).toBe(writable ? 1 : 0);
      expect(await page.locator('a:has-text("Download export")').getAttribute('href'), who).toBe(`/data/export?space=${encodeURIComponent(family)}`);
      await page.goto(`${server.url}/spaces/${family}`);
      expect(await page.locator('#person').count(), who).toBe(who === 'alice' ? 1 : 0);
      expect(await page.locator('button:has-text("Leave")').count(), who).toBe(who === 'alice' ? 0 : 1);
    }
    await people.carol.page.goto(`${server.url}/?space=${family}`);
    await shot(people.carol.page, 'reader');

    // The reader's forged requests: refused by the server (FORBIDDEN → 403 with a clear page), nothing changed.
    const before = await snapshot(family);
    const forged: [string, Promise<APIResponse>][] = [
      ['forget', post('carol', `/memories/${chores}/forget`, {})],
      ['confirm', post('carol', `/memories/${chores}/confirm`, {})],
      ['correct', post('carol', `/memories/${chores}/correct`, { text: 'The bins go out on Monday', tags: '', importance: '', reason: '' })],
      ['erase all', post('carol', '/history/erase', { space: family, confirm: 'yes' })],
      ['import', importFile('carol', family, JSON.stringify({ type: 'memory', text: 'Carol slipped this in' }))],
      ['share', post('carol', `/spaces/${family}/share`, { person: 'dave', role: 'writer' })],
      ['rename', post('carol', `/spaces/${family}/rename`, { name: 'Carol\'s now' })],
    ];
    for (const [label, pending] of forged) {
      const response = await pending;
      expect(response.status(), label).toBe(403);
      expect(await response.text(), label).toMatch(/Not (allowed|done)/);
    }
    expect(await snapshot(family)).toBe(before);
    // A writer may change memories but not the space or its members.
    expect((await post('bob', `/spaces/${family}/share`, { person: 'dave', role: 'writer' })).status()).toBe(403);
    expect((await post('bob', `/spaces/${family}/members/remove`, { member: people.carol.id })).status()).toBe(403);
    expect(await snapshot(family)).toBe(before);

    // Bob corrects and forgets through the page; alice sees both in the space's history.
    const { page } = people.bob;
    await page.goto(`${server.url}/memories/${dentist}`);
    await page.fill('#text', 'The children see the dentist every April');
    await page.click('button:has-text("Save correction")');
    await page.waitForURL(/done=corrected/);
    await page.goto(`${server.url}/?space=${family}`);
    await page.click(`#memory-${chores} button:has-text("Forget")`);
    await page.waitForURL(/done=forgotten/);
    expect(page.url()).toContain(`space=${encodeURIComponent(family)}`);
    expect(await texts(page)).toEqual(['The children see the dentist every April']);
    await people.alice.page.goto(`${server.url}/history?space=${family}`);
    expect((await people.alice.page.locator('ol.memories .memory-text').allTextContents()).sort()).toEqual([
      'The children see the dentist every March',
      'The family bins go out on Tuesday night',
    ]);
    // Alice's personal history has neither.
    await people.alice.page.goto(`${server.url}/history`);
    expect(await people.alice.page.locator('ol.memories .memory-text').count()).toBe(0);
  }, LONG_TEST_MS);

  it('a non-member forging the space id in the URL and in forms gets NOT_FOUND and sees nothing of it', async () => {
    const secret = await remember('alice', 'The family safe code is kept by grandma', family);
    const before = await snapshot(family);
    const responses: [string, APIResponse][] = [
      ['list', await get('dave', `/?space=${family}`)],
      ['search', await get('dave', `/?space=${family}&q=safe`)],
      ['memory', await get('dave', `/memories/${secret}`)],
      ['history', await get('dave', `/history?space=${family}`)],
      ['data', await get('dave', `/data?space=${family}`)],
      ['export', await get('dave', `/data/export?space=${family}`)],
      ['space', await get('dave', `/spaces/${family}`)],
      ['delete screen', await get('dave', `/spaces/${family}/delete`)],
      ['malformed', await get('dave', '/?space=space:nope')],
      ['a name, not an id', await get('dave', '/?space=Family')],
      ['two spaces', await get('dave', `/?space=personal&space=${family}`)],
      ['forget', await post('dave', `/memories/${secret}/forget`, {})],
      ['erase all', await post('dave', '/history/erase', { space: family, confirm: 'yes' })],
      ['import', await importFile('dave', family, JSON.stringify({ type: 'memory', text: 'Dave slipped this in' }))],
      ['share', await post('dave', `/spaces/${family}/share`, { person: 'dave', role: 'writer' })],
      ['leave', await post('dave', `/spaces/${family}/leave`, {})],
      ['delete', await post('dave', `/spaces/${family}/delete`, { confirm: 'Family' })],
    ];
    for (const [label, response] of responses) {
      expect(response.status(), label).toBe(404);
      const body = await response.text();
      expect(body, label).toContain('Not found');
      for (const text of ['safe code', 'dentist', 'Family']) expect(body, label).not.toContain(text);
    }
    expect(await snapshot(family)).toBe(before);
    // And the page's own list of dave's spaces does not have it.
    await people.dave.page.goto(`${server.url}/spaces`);
    expect(await people.dave.page.locator('ul.spaces li strong').allTextContents()).toEqual(['Personal']);
  }, LONG_TEST_MS);

  it('exports one space with only its memories, and imports into the space chosen', async () => {
    const exported = await get('alice', `/data/export?space=${family}`);
    expect(exported.status()).toBe(200);
    const lines = (await exported.text()).trim().split('\n').map((line) => JSON.parse(line) as { type: string; text?: string });
    const memoryTexts = lines.filter((line) => line.type === 'memory').map((line) => line.text).sort();
    const inSpace = await listed('alice', family);
    expect(memoryTexts).toEqual((inSpace as { text: string }[]).map((memory) => memory.text).sort());
    expect(memoryTexts).not.toContain('Alice keeps her diary in the blue drawer');
    expect(lines.filter((line) => line.type === 'tombstone').map((line) => line.text).sort()).toEqual([
      'The children see the dentist every March',
      'The family bins go out on Tuesday night',
    ]);

    // Bob (a writer) imports through the page into Family.
    const { page } = people.bob;
    await page.goto(`${server.url}/data?space=${family}`);
    await page.setInputFiles('#file', { name: 'family.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(JSON.stringify({ type: 'memory', text: 'The family car is due for its service in May' })) });
    await page.click('button:has-text("Import")');
    await page.waitForURL(`${server.url}/data/import`);
    expect(await page.locator('table.counts').innerText()).toMatch(/Memories imported\s+1/);
    expect((await listed('bob', family) as { text: string }[]).map((memory) => memory.text)).toContain('The family car is due for its service in May');
    expect((await listed('bob', 'personal') as { text: string }[]).map((memory) => memory.text)).not.toContain('The family car is due for its service in May');
  }, LONG_TEST_MS);

  it('the owner changes a role; removing bob ends his access on his next request, page and tools', async () => {
    const { page } = people.alice;
    await page.goto(`${server.url}/spaces/${family}`);
    await page.click('#member-2 button:has-text("Make writer")');
    await page.waitForURL(/done=role-changed/);
    expect(await page.locator('#member-2').innerText()).toMatch(/^carol\s+writer/);
    await people.carol.page.goto(`${server.url}/?space=${family}`);
    expect(await people.carol.page.locator('button:has-text("Forget")').count()).toBeGreaterThan(0);
    await page.click('#member-2 button:has-text("Make reader")');
    await page.waitForURL(/done=role-changed/);

    await people.bob.page.goto(`${server.url}/?space=${family}`);
    expect((await texts(people.bob.page)).length).toBeGreaterThan(0);
    await page.click('#member-1 button:has-text("Remove")');
    await page.waitForURL(/done=removed/);
    expect(await page.locator('ul.members li').allInnerTexts()).toEqual([expect.stringMatching(/^alice\s+owner/), expect.stringMatching(/^carol\s+reader/)]);
    // Bob's session and his token are the same as before; the space is gone for both.
    expect((await get('bob', `/?space=${family}`)).status()).toBe(404);
    expect((await post('bob', `/memories/${(await listed('alice', family) as { memory_id: number }[])[0]!.memory_id}/forget`, {})).status()).toBe(404);
    expect(await listed('bob', family)).toMatchObject({ error: { code: 'NOT_FOUND' } });
  }, LONG_TEST_MS);

  it('a member leaves; the owner hands the space on to a member and becomes a writer', async () => {
    const { page } = people.carol;
    await page.goto(`${server.url}/spaces/${family}`);
    await page.click('button:has-text("Leave")');
    await page.waitForURL(/\/spaces\?done=left$/);
    expect(await page.locator('.notice').textContent()).toBe('You left the space.');
    expect(await page.locator('ul.spaces li strong').allTextContents()).toEqual(['Personal']);
    expect((await get('carol', `/?space=${family}`)).status()).toBe(404);
    // The owner cannot leave: a clear refusal, nothing changed.
    const before = await snapshot(family);
    const refused = await post('alice', `/spaces/${family}/leave`, {});
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('the owner cannot leave a space');
    expect(await snapshot(family)).toBe(before);

    const owner = people.alice.page;
    await owner.goto(`${server.url}/spaces/${family}`);
    await owner.fill('#person', 'bob');
    await owner.selectOption('#share-role', 'writer');
    await owner.click('button:has-text("Share")');
    await owner.waitForURL(/done=shared/);
    await owner.click('#member-1 button:has-text("Hand the space on")');
    await owner.waitForURL(/done=handed-on/);
    expect(await owner.locator('ul.members li').allInnerTexts()).toEqual([expect.stringMatching(/^bob\s+owner/), expect.stringMatching(/^alice\s+writer/)]);
    expect(await owner.locator('#person').count()).toBe(0);
    await people.bob.page.goto(`${server.url}/spaces/${family}`);
    expect(await people.bob.page.locator('#person').count()).toBe(1);
  }, LONG_TEST_MS);

  it('deletes a space only after its name is typed: a wrong name deletes nothing; then its memories and tombstones go', async () => {
    const { page } = people.bob;
    expect((await get('alice', `/spaces/${family}/delete`)).status()).toBe(403);
    await page.goto(`${server.url}/spaces/${family}`);
    await page.click('a:has-text("Delete this space")');
    await page.waitForURL(`${server.url}/spaces/${family}/delete`);
    const before = await snapshot(family);
    expect(JSON.parse(before).memories.length).toBeGreaterThan(0);
    expect(JSON.parse(before).tombstones.length).toBeGreaterThan(0);
    await page.fill('#confirm', 'Familie');
    await page.click('button:has-text("Delete the space")');
    expect(await page.locator('.error').textContent()).toBe('Type the space\'s name, "Family", to delete it. Nothing was deleted.');
    expect(await snapshot(family)).toBe(before);
    await page.fill('#confirm', 'family');
    await page.click('button:has-text("Delete the space")');
    await page.waitForURL(/\/spaces\?done=space-deleted$/);
    expect(JSON.parse(await snapshot(family))).toEqual({ memories: [], restatements: [], tombstones: [], space: [], members: [] });
    expect((await get('alice', `/?space=${family}`)).status()).toBe(404);
    // Alice's personal memories are untouched.
    expect((await listed('alice', 'personal') as { text: string }[]).map((memory) => memory.text)).toContain('Alice keeps her diary in the blue drawer');
  }, LONG_TEST_MS);

  it('owner / writer / reader / non-member × every page route: what each may do is done, the rest refused with nothing changed', async () => {
    // A fresh space for the matrix, set up through the service: alice owns it, bob writes, carol reads, dave is not in it.
    const made = await spaces.create(people.alice.id, 'Matrix');
    const key = made.id;
    matrix = key;
    const members = async () => {
      await spaces.share(people.alice.id, key, 'bob', 'writer');
      await spaces.share(people.alice.id, key, 'carol', 'reader');
    };
    await members();
    let counter = 0;
    const fresh = async () => remember('alice', `Matrix fact number ${++counter} about the shed`, key);
    const freshTombstone = async () => {
      const id = await fresh();
      await server.call(people.alice.token, 'forget', { memory_id: id, space: key });
      return id;
    };
    const freshRestatement = async () => {
      const text = `Matrix restated fact ${++counter} about the garden gate`;
      const id = await remember('alice', text, key);
      await server.call(people.alice.token, 'remember', { text: `${text}.`, space: key, dedup_policy: 'skip_if_near' });
      const memory = (await listed('alice', key) as { memory_id: number; restatements: { restatement_id: number }[] }[]).find((candidate) => candidate.memory_id === id)!;
      expect(memory.restatements).toHaveLength(1);
      return memory.restatements[0]!.restatement_id;
    };
    /** A space of alice's with the same members, for the routes that end it or its ownership. */
    const throwaway = async () => {
      const space = (await spaces.create(people.alice.id, `Throwaway ${++counter}`)).id;
      await spaces.share(people.alice.id, space, 'bob', 'writer');
      await spaces.share(people.alice.id, space, 'carol', 'reader');
      return space;
    };
    const q = (space: string) => encodeURIComponent(space);
    const read = { alice: 200, bob: 200, carol: 200, dave: 404 };
    const write = { alice: 303, bob: 303, carol: 403, dave: 404 };
    const manage = { alice: 303, bob: 403, carol: 403, dave: 404 };
    type Expected = Record<Name, number>;
    interface Route {
      readonly name: string;
      readonly expected: Omit<Expected, 'erin'>;
      /** Makes what the request targets (fresh for each person), then gives the space it acts on and the request. */
      readonly send: (who: Name) => Promise<{ space: string; request: () => Promise<APIResponse> }>;
      /** Whether a success need change nothing (a screen). */
      readonly reads?: boolean;
    }
    const onKey = (request: () => Promise<APIResponse>, space = key) => ({ space, request });
    const routes: Route[] = [
      { name: 'GET /', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/?space=${q(key)}`)) },
      { name: 'GET /?q=', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/?space=${q(key)}&q=shed`)) },
      {
        name: 'GET /memories/:id',
        expected: read,
        reads: true,
        send: async (who) => {
          const target = await fresh();
          return onKey(() => get(who, `/memories/${target}`));
        },
      },
      { name: 'GET /history', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/history?space=${q(key)}`)) },
      { name: 'GET /data', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/data?space=${q(key)}`)) },
      { name: 'GET /data/export', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/data/export?space=${q(key)}`)) },
      { name: 'GET /data/delete', expected: { alice: 200, bob: 200, carol: 200, dave: 200 }, reads: true, send: async (who) => onKey(() => get(who, '/data/delete')) },
      { name: 'GET /spaces', expected: { alice: 200, bob: 200, carol: 200, dave: 200 }, reads: true, send: async (who) => onKey(() => get(who, '/spaces')) },
      { name: 'GET /spaces/:id', expected: read, reads: true, send: async (who) => onKey(() => get(who, `/spaces/${key}`)) },
      { name: 'GET /spaces/:id/delete', expected: { alice: 200, bob: 403, carol: 403, dave: 404 }, reads: true, send: async (who) => onKey(() => get(who, `/spaces/${key}/delete`)) },
      {
        name: 'POST /memories/:id/confirm',
        expected: write,
        send: async (who) => {
          const target = await fresh();
          return onKey(() => post(who, `/memories/${target}/confirm`, {}));
        },
      },
      {
        name: 'POST /memories/:id/correct',
        expected: write,
        send: async (who) => {
          const target = await fresh();
          return onKey(() => post(who, `/memories/${target}/correct`, { text: `Corrected by ${who}: the shed is green`, tags: '', importance: '', reason: '' }));
        },
      },
      {
        name: 'POST /memories/:id/forget',
        expected: write,
        send: async (who) => {
          const target = await fresh();
          return onKey(() => post(who, `/memories/${target}/forget`, { reason: 'matrix' }));
        },
      },
      {
        name: 'POST /restatements/:id/separate',
        expected: write,
        send: async (who) => {
          const target = await freshRestatement();
          return onKey(() => post(who, `/restatements/${target}/separate`, {}));
        },
      },
      {
        name: 'POST /history/:id/erase',
        expected: write,
        send: async (who) => {
          const target = await freshTombstone();
          return onKey(() => post(who, `/history/${target}/erase`, { space: key }));
        },
      },
      {
        name: 'POST /history/erase',
        expected: write,
        send: async (who) => {
          await freshTombstone();
          return onKey(() => post(who, '/history/erase', { space: key, confirm: 'yes' }));
        },
      },
      {
        name: 'POST /data/import',
        expected: { alice: 200, bob: 200, carol: 403, dave: 404 },
        send: async (who) => onKey(() => importFile(who, key, JSON.stringify({ type: 'memory', text: `Imported by ${who} into the matrix` }))),
      },
      { name: 'POST /spaces/:id/rename', expected: manage, send: async (who) => onKey(() => post(who, `/spaces/${key}/rename`, { name: `Matrix of ${who}` })) },
      { name: 'POST /spaces/:id/share', expected: manage, send: async (who) => onKey(() => post(who, `/spaces/${key}/share`, { person: 'erin', role: 'reader' })) },
      { name: 'POST /spaces/:id/members/role', expected: manage, send: async (who) => onKey(() => post(who, `/spaces/${key}/members/role`, { member: people.erin.id, role: 'writer' })) },
      { name: 'POST /spaces/:id/group', expected: manage, send: async (who) => onKey(() => post(who, `/spaces/${key}/group`, { group: 'household', role: 'reader' })) },
      { name: 'POST /spaces/:id/members/remove', expected: manage, send: async (who) => onKey(() => post(who, `/spaces/${key}/members/remove`, { member: people.erin.id })) },
      {
        name: 'POST /spaces/:id/leave',
        expected: { alice: 403, bob: 303, carol: 303, dave: 404 },
        send: async (who) => {
          await members();
          return onKey(() => post(who, `/spaces/${key}/leave`, {}));
        },
      },
      {
        name: 'POST /spaces/:id/transfer',
        expected: manage,
        send: async (who) => {
          const space = await throwaway();
          return onKey(() => post(who, `/spaces/${space}/transfer`, { member: people.bob.id }), space);
        },
      },
      {
        name: 'POST /spaces/:id/delete',
        expected: manage,
        send: async (who) => {
          const space = await throwaway();
          const { name } = await spaces.details(people.alice.id, space);
          return onKey(() => post(who, `/spaces/${space}/delete`, { confirm: name }), space);
        },
      },
      { name: 'POST /spaces', expected: { alice: 303, bob: 303, carol: 303, dave: 303 }, reads: true, send: async (who) => onKey(() => post(who, '/spaces', { name: `Own space of ${who}` })) },
    ];
    let checked = 0;
    for (const route of routes) {
      // The owner last: a success of theirs (a removal, a hand-on) must not change what the others meet.
      for (const who of ['dave', 'carol', 'bob', 'alice'] as const) {
        const label = `${route.name} as ${who}`;
        const expected = route.expected[who];
        // What the request targets is made first, so the snapshot is taken after it.
        const { space, request } = await route.send(who);
        const before = await snapshot(space);
        const response = await request();
        expect(response.status(), label).toBe(expected);
        checked += 1;
        if (expected >= 400) {
          // Refused: the page says so, nothing changed, and nothing of the space's content is in the answer.
          const body = await response.text();
          expect(body, label).toMatch(expected === 404 ? /Not found/ : /Not (allowed|done)/);
          if (who === 'dave') expect(body, label).not.toContain('Matrix fact');
          expect(await snapshot(space), label).toBe(before);
        } else if (route.reads !== true) {
          expect(await snapshot(space), label).not.toBe(before);
        }
      }
    }
    expect(checked).toBe(routes.length * 4);
  }, 600_000);

  it('has no serious or critical accessibility violations (axe-core) on the spaces screens', async () => {
    // axe runs as a script: only this context bypasses the CSP.
    const context = await chromium.newContext({ bypassCSP: true });
    try {
      const page = await context.newPage();
      await signInOnPage(page, server.url, PEOPLE.alice);
      for (const path of ['/spaces', `/spaces/${matrix}`, `/spaces/${matrix}/delete`, `/?space=${encodeURIComponent(matrix)}`, `/history?space=${encodeURIComponent(matrix)}`, `/data?space=${encodeURIComponent(matrix)}`]) {
        await page.goto(`${server.url}${path}`);
        expect(await page.locator('.who').textContent(), path).toBe('Signed in as alice');
        expect(await seriousViolations(page), path).toEqual([]);
      }
    } finally {
      await context.close();
    }
  }, LONG_TEST_MS);
});
