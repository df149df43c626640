import { readFileSync, rmSync } from 'node:fs';
import type { Browser as ChromiumBrowser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { browserSkipReason, launchChromium, type Credentials } from '../helpers/browser.js';
import { engines, type Engine } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { csrfOf, readAsOwner, screenshot, seriousViolations, signInOnPage } from '../helpers/web-page.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const ALICE: Credentials = { username: 'alice', password: 'alice keeps bees on the roof' };
const BOB: Credentials = { username: 'bob', password: 'bob collects old maps' };
const PHONE = { width: 375, height: 740 };

/** Rows of `subject` in every table of the server's schema that has a subject column, read by the database owner. */
async function rowsOf(server: TestServer, engine: Engine, subject: string): Promise<Record<string, number>> {
  return readAsOwner(engine, async (query) => {
    const tables = await query(`select table_name from information_schema.columns where table_schema = $1 and column_name = 'subject' order by table_name`, [server.schema]);
    const counts: Record<string, number> = {};
    for (const { table_name: table } of tables) {
      const [row] = await query(`select count(*)::int as n from "${server.schema}"."${String(table)}" where subject = $1`, [subject]);
      counts[String(table)] = Number(row?.n);
    }
    return counts;
  });
}

describe.skipIf(skip !== undefined).each(engines)('the web page on %s', (engine) => {
  let server: TestServer;
  let chromium: ChromiumBrowser;
  let alice: { id: string; token: string; context: BrowserContext; page: Page };
  let bob: { id: string; token: string; context: BrowserContext; page: Page };
  const aliceIds: number[] = [];
  const shot = (page: Page, name: string) => screenshot(page, `${engine}-${name}`, { firstScreen: name.startsWith('phone-') });

  const signedInContext = async (credentials: Credentials, options: Parameters<ChromiumBrowser['newContext']>[0] = {}) => {
    const context = await chromium.newContext(options);
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signInOnPage(page, server.url, credentials);
    return { context, page };
  };

  beforeAll(async () => {
    server = await startTestServer({ engine });
    const users = new UserStore(usersFilePath(server.config.dataDir));
    const aliceUser = await users.add(ALICE.username, ALICE.password);
    const bobUser = await users.add(BOB.username, BOB.password);
    const aliceToken = await server.token(aliceUser.id);
    const bobToken = await server.token(bobUser.id);
    // 25 memories: more than one page of 20.
    for (let i = 1; i <= 22; i++) {
      const { structured } = await server.call(aliceToken, 'remember', {
        text: `Alice noted fact number ${i} about her garden`,
        tags: [i % 2 === 0 ? 'garden' : 'notes'],
        dedup_policy: 'insert',
      });
      aliceIds.push(structured.memory_id as number);
    }
    for (const [text, tags] of [
      ['Alice is allergic to penicillin', ['health']],
      ['Alice lives in Lisbon with her cat Miso', ['home']],
      ['Alice prefers green tea in the morning', ['food', 'morning']],
    ] as const) {
      const { structured } = await server.call(aliceToken, 'remember', { text, tags: [...tags], source_provider: 'claude', session_id: 'chat-7', capture_mode: 'explicit' });
      aliceIds.push(structured.memory_id as number);
    }
    await server.call(bobToken, 'remember', { text: 'Bob sails a small boat called Heron', tags: ['hobby'] });
    chromium = await launchChromium();
    alice = { id: aliceUser.id, token: aliceToken, ...(await signedInContext(ALICE)) };
    bob = { id: bobUser.id, token: bobToken, ...(await signedInContext(BOB)) };
    // Two argon2 sign-ups, 26 memories embedded one by one and a browser: more than the default on a busy machine.
  }, 240_000);
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  const texts = (page: Page) => page.locator('ol.memories .memory-text').allTextContents();

  it('signs in through the real login page and keeps the session in an HttpOnly, SameSite=Lax cookie', async () => {
    const { page, context } = alice;
    expect(page.url()).toBe(`${server.url}/`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Your memories');
    const cookies = await context.cookies(server.url);
    const session = cookies.find((cookie) => cookie.name === 'memory-session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });
    // Nothing of the sign-in in progress is left behind.
    expect(cookies.find((cookie) => cookie.name === 'memory-sign-in')).toBeUndefined();
    const response = await page.request.get(`${server.url}/`);
    expect(response.headers()['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers()).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' });
    // The database holds a hash of the cookie, never its value.
    const rows = await server.service.db.withoutSubject('test', (trx) => trx.selectFrom('web_sessions').selectAll().execute());
    expect(rows.filter((row) => row.subject === alice.id)).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(session!.value);
  });

  it('styles the page from its own stylesheet under the CSP, with no script at all', async () => {
    const { page } = alice;
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${server.url}/`);
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(243, 245, 248)');
    expect(await page.locator('script, [style]').count()).toBe(0);
    expect(violations).toEqual([]);
    await shot(page, 'memories');
  });

  it('lists memories newest first, 20 to a page, with a link to older ones', async () => {
    const { page } = alice;
    await page.goto(`${server.url}/`);
    const first = await texts(page);
    expect(first).toHaveLength(20);
    expect(first[0]).toBe('Alice prefers green tea in the morning');
    expect(first[19]).toBe('Alice noted fact number 6 about her garden');
    await page.click('a[rel=next]');
    const second = await texts(page);
    expect(second).toEqual([5, 4, 3, 2, 1].map((i) => `Alice noted fact number ${i} about her garden`));
    expect(await page.locator('a[rel=next]').count()).toBe(0);
    await shot(page, 'memories-older');
  });

  it('searches like recall, and filters by tag', async () => {
    const { page } = alice;
    await page.goto(`${server.url}/`);
    await page.fill('#q', 'Which antibiotic is Alice allergic to?');
    await page.click('form[role=search] button[type=submit]');
    await page.waitForURL(/\?q=/);
    expect((await texts(page))[0]).toBe('Alice is allergic to penicillin');
    await shot(page, 'search');

    await page.goto(`${server.url}/`);
    await page.selectOption('#tag', 'garden');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/tag=garden/);
    const garden = await texts(page);
    expect(garden).toHaveLength(11);
    expect(garden.every((text) => text.includes('garden'))).toBe(true);
    // A tag chip filters too.
    await page.goto(`${server.url}/`);
    await page.click('a.tag:has-text("health")');
    expect(await texts(page)).toEqual(['Alice is allergic to penicillin']);
    await shot(page, 'tag-filter');
  });

  it('edits a memory: the correction is a new memory, the old one is kept as corrected', async () => {
    const { page } = alice;
    const lisbon = aliceIds[23]!;
    await page.goto(`${server.url}/memories/${lisbon}`);
    await shot(page, 'memory');
    await page.fill('#text', 'Alice lives in Porto with her cat Miso');
    await page.fill('#tags', 'home, Moving House');
    await page.fill('#reason', 'moved in 2026');
    await page.click('button:has-text("Save correction")');
    await page.waitForURL(/done=corrected/);
    const newId = Number(/\/memories\/(\d+)/.exec(page.url())![1]);
    expect(newId).toBeGreaterThan(lisbon);
    expect(await page.locator('section .memory-text').textContent()).toBe('Alice lives in Porto with her cat Miso');
    // The tool's answer for the same memory: tags normalised, provenance carried over.
    const listed = await server.call(alice.token, 'list_memories', { limit: 1 });
    expect((listed.structured.memories as Record<string, unknown>[])[0]).toMatchObject({
      memory_id: newId,
      text: 'Alice lives in Porto with her cat Miso',
      tags: ['home', 'moving-house'],
      source_provider: 'claude',
      session_id: 'chat-7',
      capture_mode: 'explicit',
    });
    const remembered = await server.call(alice.token, 'remember', { text: 'Alice lives in Lisbon with her cat Miso' });
    expect(remembered.structured.previously_corrected).toEqual([expect.objectContaining({ memory_id: lisbon, reason: 'corrected', replaced_by: newId, note: 'moved in 2026' })]);
    await server.call(alice.token, 'forget', { memory_id: remembered.structured.memory_id });
  });

  it('refuses a secret in an edit, keeps what was typed, and changes nothing', async () => {
    const { page } = alice;
    const tea = aliceIds[24]!;
    await page.goto(`${server.url}/memories/${tea}`);
    await page.fill('#text', 'Alice prefers green tea; her api key is sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0AbCdEfGhIjKlMnOpQrStUv');
    await page.click('button:has-text("Save correction")');
    expect(await page.locator('.error').textContent()).toBe('Text looks like a secret (API key, token, password or private key) and was not stored; remove the secret and try again');
    expect(await page.inputValue('#text')).toContain('green tea');
    const read = await server.call(alice.token, 'recall', { query: 'green tea', limit: 1 });
    expect((read.structured.memories as { memory_id: number }[])[0]?.memory_id).toBe(tea);
    await shot(page, 'memory-refused');
  });

  it('confirms and forgets from the list', async () => {
    const { page } = alice;
    const fact = aliceIds[0]!;
    const before = await server.service.db.withSubject(alice.id, 'test', (trx) =>
      trx.selectFrom('memories').select('last_confirmed_at').where('id', '=', fact).executeTakeFirstOrThrow(),
    );
    await page.goto(`${server.url}/memories/${fact}`);
    await page.click('button:has-text("Still true")');
    await page.waitForURL(/done=confirmed/);
    expect(await page.locator('.notice').textContent()).toBe('Marked as still true.');
    const after = await server.service.db.withSubject(alice.id, 'test', (trx) =>
      trx.selectFrom('memories').select('last_confirmed_at').where('id', '=', fact).executeTakeFirstOrThrow(),
    );
    expect(after.last_confirmed_at.getTime()).toBeGreaterThan(before.last_confirmed_at.getTime());

    await page.goto(`${server.url}/?tag=notes`);
    await page.click(`#memory-${fact} button:has-text("Forget")`);
    await page.waitForURL(/done=forgotten/);
    expect(await page.locator('.notice').textContent()).toContain(`Memory ${fact} was forgotten`);
    expect(await texts(page)).not.toContain('Alice noted fact number 1 about her garden');
    await shot(page, 'forgotten');
  });

  it('shows what was corrected or forgotten, and erases one record or all of them', async () => {
    const { page } = alice;
    await page.goto(`${server.url}/history`);
    // Newest first: fact 1 (forgotten), Lisbon remembered again and forgotten, Lisbon corrected.
    expect(await page.locator('ol.memories .memory-text').allTextContents()).toEqual([
      'Alice noted fact number 1 about her garden',
      'Alice lives in Lisbon with her cat Miso',
      'Alice lives in Lisbon with her cat Miso',
    ]);
    expect(await page.locator('.meta').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^Corrected .*\(now memory \d+\)/)]));
    await shot(page, 'history');
    // Without ticking the box, "Erase all" does nothing (the browser would not even send it; a forged post is refused).
    const refused = await page.request.post(`${server.url}/history/erase`, { form: { csrf: await csrfOf(page) } });
    expect(refused.status()).toBe(400);
    await page.click(`#tombstone-${aliceIds[0]} button:has-text("Erase")`);
    await page.waitForURL(/done=erased/);
    expect(await page.locator('ol.memories .memory-text').allTextContents()).not.toContain('Alice noted fact number 1 about her garden');
    const count = await page.locator('ol.memories > li').count();
    expect(count).toBeGreaterThan(0);
    await page.check('input[name=confirm]');
    await page.click('button:has-text("Erase all")');
    await page.waitForURL(/done=erased-all/);
    expect(await page.locator('.notice').textContent()).toBe(`${count} records were erased.`);
    const left = await server.service.db.withSubject(alice.id, 'test', (trx) => trx.selectFrom('tombstones').select('id').execute());
    expect(left).toEqual([]);
  });

  let exported = '';

  it('exports everything as one JSONL file with every field', async () => {
    const { page } = alice;
    // One tombstone, so the file has both kinds.
    const forgotten = aliceIds[1]!;
    await server.call(alice.token, 'forget', { memory_id: forgotten, reason: 'no longer true' });
    await page.goto(`${server.url}/data`);
    await shot(page, 'data');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download export")')]);
    expect(download.suggestedFilename()).toMatch(/^memory-service-export-\d{4}-\d{2}-\d{2}\.jsonl$/);
    exported = readFileSync((await download.path())!, 'utf8');
    const lines = exported.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toEqual({ format: 'memory-service-export', version: 2, exported_at: expect.any(String) });
    const memories = lines.filter((line) => line.type === 'memory');
    const tombstones = lines.filter((line) => line.type === 'tombstone');
    expect(memories).toHaveLength(23);
    expect(Object.keys(memories[0]!).sort()).toEqual(
      ['type', 'memory_id', 'text', 'tags', 'importance', 'capture_mode', 'source_provider', 'session_id', 'created_at', 'updated_at', 'last_confirmed_at', 'expires_at', 'embedding_model', 'restatements'].sort(),
    );
    expect(memories.find((line) => line.text === 'Alice is allergic to penicillin')).toMatchObject({
      tags: ['health'],
      importance: 0.5,
      capture_mode: 'explicit',
      source_provider: 'claude',
      session_id: 'chat-7',
      expires_at: null,
      embedding_model: 'local:universal-sentence-encoder-lite',
    });
    expect(tombstones).toEqual([
      expect.objectContaining({ memory_id: forgotten, text: 'Alice noted fact number 2 about her garden', reason: 'forgotten', note: 'no longer true', replaced_by: null, tags: ['garden'] }),
    ]);
    // Oldest first.
    const created = memories.map((line) => Date.parse(String(line.created_at)));
    expect(created).toEqual([...created].sort((a, b) => a - b));
    expect(exported).not.toContain('Bob');
  });

  it("imports an export into another person's memories, then skips all of it the second time", async () => {
    const { page } = bob;
    const upload = async (name: string, content: string) => {
      await page.goto(`${server.url}/data`);
      await page.setInputFiles('#file', { name, mimeType: 'application/jsonl', buffer: Buffer.from(content) });
      await page.click('button:has-text("Import")');
      await page.waitForURL(`${server.url}/data/import`);
      return Object.fromEntries(
        await page.locator('table.counts tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')!.textContent, Number(row.querySelector('td')!.textContent)])),
      ) as Record<string, number>;
    };
    expect(await upload('alice.jsonl', exported)).toEqual({
      'Memories imported': 23,
      'Corrected or forgotten records imported': 1,
      'Skipped, already stored': 0,
      Refused: 0,
    });
    await shot(page, 'import-summary');
    expect(await upload('alice.jsonl', exported)).toEqual({
      'Memories imported': 0,
      'Corrected or forgotten records imported': 0,
      'Skipped, already stored': 24,
      Refused: 0,
    });
    await page.goto(`${server.url}/?q=penicillin`);
    expect((await texts(page))[0]).toBe('Alice is allergic to penicillin');
    const imported = await server.call(bob.token, 'list_memories', { limit: 100 });
    const penicillin = (imported.structured.memories as Record<string, unknown>[]).find((memory) => memory.text === 'Alice is allergic to penicillin');
    const original = exported.split('\n').map((line) => (line === '' ? {} : JSON.parse(line))).find((line: Record<string, unknown>) => line.text === 'Alice is allergic to penicillin');
    // Every field but the id comes back as it was.
    expect(penicillin).toMatchObject({ tags: original.tags, source_provider: 'claude', session_id: 'chat-7', capture_mode: 'explicit', created_at: original.created_at, last_confirmed_at: original.last_confirmed_at });
  });

  it("imports an MCP memory server's memory.jsonl, refusing secrets and invalid lines with their line numbers", async () => {
    const { page } = bob;
    const memoryJsonl = [
      JSON.stringify({ type: 'entity', name: 'John_Smith', entityType: 'person', observations: ['Speaks fluent Spanish', 'Graduated in 2019', 'His password is Hunter2-Hunter2'] }),
      JSON.stringify({ type: 'relation', from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' }),
      '{"type":"entity","name":"Broken"',
      JSON.stringify({ type: 'entity', name: 'Anthropic', entityType: 'organization', observations: ['Makes Claude', ''] }),
      JSON.stringify({ type: 'relation', from: 'Anthropic', to: '', relationType: 'employs' }),
      JSON.stringify({ type: 'thing' }),
    ].join('\n');
    await page.goto(`${server.url}/data`);
    await page.setInputFiles('#file', { name: 'memory.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(memoryJsonl) });
    await page.click('button:has-text("Import")');
    await page.waitForURL(`${server.url}/data/import`);
    const counts = await page.locator('table.counts td').allTextContents();
    expect(counts).toEqual(['4', '0', '0', '5']);
    expect(await page.locator('ul.plain li').allTextContents()).toEqual([
      'line 1, observations[2]: text looks like a secret (API key, token, password or private key) and was not stored; remove the secret and try again',
      'line 3: not valid JSON',
      'line 4, observations[1]: text: must not be blank',
      'line 5: to: must not be empty',
      'line 6: type must be "memory" or "tombstone" (this service\'s export) or "entity" or "relation" (MCP memory server)',
    ]);
    expect(await page.content()).not.toContain('Hunter2');
    await shot(page, 'import-mcp');
    const listed = await server.call(bob.token, 'list_memories', { tags: ['john-smith'] });
    expect((listed.structured.memories as Record<string, unknown>[]).map((memory) => [memory.text, memory.tags, memory.source_provider])).toEqual([
      ['John_Smith works_at Anthropic', ['john-smith', 'anthropic'], 'mcp-memory-server'],
      ['Graduated in 2019', ['john-smith', 'person'], 'mcp-memory-server'],
      ['Speaks fluent Spanish', ['john-smith', 'person'], 'mcp-memory-server'],
    ]);
  });

  it('refuses a file over WebImportMaxBytes before importing anything; a new state-file generation ends every session', async () => {
    const small = await startTestServer({ engine, env: { MEMORY_SERVICE_WEB_IMPORT_MAX_BYTES: '2048' } });
    try {
      const users = new UserStore(usersFilePath(small.config.dataDir));
      await users.add('carol', 'carol reads in the park');
      const context = await chromium.newContext();
      const page = await context.newPage();
      await signInOnPage(page, small.url, { username: 'carol', password: 'carol reads in the park' });
      await page.goto(`${small.url}/data`);
      const big = Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: 'memory', text: `Carol fact ${i}` })).join('\n');
      await page.setInputFiles('#file', { name: 'big.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(big) });
      const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/data/import')), page.click('button:has-text("Import")')]);
      expect(response.status()).toBe(413);
      expect(await page.locator('.error').textContent()).toContain('larger than 2048 bytes');
      const carol = users.findByName('carol')!;
      const stored = await small.service.db.withSubject(carol.id, 'test', (trx) => trx.selectFrom('memories').select('id').execute());
      expect(stored).toEqual([]);
      // Deleting the state file logs everyone out of the page too, as it does every client.
      rmSync(small.config.oauth.asIniFile);
      await page.goto(`${small.url}/data`);
      expect(page.url()).toContain('/oauth/interaction/');
      await context.close();
    } finally {
      await small.close();
    }
  });

  it("never shows another person's memories, and refuses to act on their ids as if they did not exist", async () => {
    const { page } = bob;
    await server.call(alice.token, 'remember', { text: 'Alice quietly plans a trip to Kyoto', tags: ['travel'] });
    await page.goto(`${server.url}/`);
    const bobTexts = await texts(page);
    expect(bobTexts).toContain('Bob sails a small boat called Heron');
    await page.goto(`${server.url}/?q=${encodeURIComponent('Bob sails a boat')}`);
    expect((await texts(page))[0]).toBe('Bob sails a small boat called Heron');
    // Alice's page never shows Bob's memory, in the list, the search or the tag list.
    await alice.page.goto(`${server.url}/?q=${encodeURIComponent('Who sails a boat called Heron?')}`);
    expect((await texts(alice.page)).filter((text) => text.includes('Heron'))).toEqual([]);
    await alice.page.goto(`${server.url}/`);
    expect((await alice.page.locator('#tag option').allTextContents()).filter((tag) => tag.includes('hobby'))).toEqual([]);
    await page.goto(`${server.url}/?q=${encodeURIComponent('Who plans a trip to Kyoto?')}`);
    expect((await texts(page)).filter((text) => text.includes('Kyoto'))).toEqual([]);
    await page.goto(`${server.url}/`);
    expect((await page.locator('#tag option').allTextContents()).filter((tag) => tag.includes('travel'))).toEqual([]);

    const target = aliceIds[2]!;
    const before = await rowsOf(server, engine, alice.id);
    expect((await page.request.get(`${server.url}/memories/${target}`)).status()).toBe(404);
    const csrf = await csrfOf(page);
    for (const [path, form] of [
      [`/memories/${target}/forget`, {}],
      [`/memories/${target}/confirm`, {}],
      [`/memories/${target}/correct`, { text: 'Bob wrote this into Alice' }],
      [`/history/${aliceIds[1]}/erase`, {}],
    ] as const) {
      const response = await page.request.post(`${server.url}${path}`, { form: { csrf, ...form } });
      expect(response.status(), path).toBe(404);
    }
    expect(await rowsOf(server, engine, alice.id)).toEqual(before);
    const aliceMemory = await server.call(alice.token, 'recall', { query: 'fact number 3 about her garden', limit: 1 });
    expect((aliceMemory.structured.memories as { text: string }[])[0]?.text).toBe('Alice noted fact number 3 about her garden');
    // Bob's own export holds nothing of Alice's but what he imported from her file.
    const bobExport = await (await page.request.get(`${server.url}/data/export`)).text();
    expect(bobExport).toContain('Heron');
    expect(bobExport).not.toContain('Kyoto');
  });

  it('refuses a form posted without its CSRF token or with a wrong one', async () => {
    const { page } = alice;
    const target = aliceIds[3]!;
    for (const form of [{}, { csrf: 'x'.repeat(43) }, { csrf: await csrfOf(bob.page) }]) {
      const response = await page.request.post(`${server.url}/memories/${target}/forget`, { form });
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain('security token');
    }
    const stillThere = await server.call(alice.token, 'recall', { query: 'fact number 4 about her garden', limit: 1 });
    expect((stillThere.structured.memories as { memory_id: number }[])[0]?.memory_id).toBe(target);
    // A multipart import without the token reads no file.
    const response = await page.request.post(`${server.url}/data/import`, {
      multipart: { file: { name: 'x.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from('{"type":"memory","text":"planted by a forged form"}') } },
    });
    expect(response.status()).toBe(403);
    const planted = await server.call(alice.token, 'recall', { query: 'planted by a forged form', limit: 5 });
    expect(JSON.stringify(planted.structured)).not.toContain('planted');
  });

  it('works without JavaScript: sign in, list, search, edit, forget, export, import and the delete confirmation', async () => {
    const { context, page } = await signedInContext(ALICE, { javaScriptEnabled: false });
    try {
      expect(await texts(page)).toHaveLength(20);
      await page.fill('#q', 'green tea');
      await page.click('form[role=search] button[type=submit]');
      await page.waitForURL(/\?q=/);
      expect((await texts(page))[0]).toBe('Alice prefers green tea in the morning');
      await page.goto(`${server.url}/memories/${aliceIds[4]}`);
      await page.fill('#text', 'Alice noted fact number 5, now corrected without scripts');
      await page.click('button:has-text("Save correction")');
      await page.waitForURL(/done=corrected/);
      await page.click('button:has-text("Forget this memory")');
      await page.waitForURL(/done=forgotten/);
      expect(await texts(page)).not.toContain('Alice noted fact number 5, now corrected without scripts');

      await page.goto(`${server.url}/data`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download export")')]);
      const file = readFileSync((await download.path())!, 'utf8');
      expect(file).toContain('Alice prefers green tea in the morning');
      expect(file).toContain('now corrected without scripts');
      await page.setInputFiles('#file', {
        name: 'memory.jsonl',
        mimeType: 'application/jsonl',
        buffer: Buffer.from(JSON.stringify({ type: 'entity', name: 'Alice', entityType: 'person', observations: ['Alice imported this without scripts'] })),
      });
      await page.click('button:has-text("Import")');
      await page.waitForURL(`${server.url}/data/import`);
      expect(await page.locator('table.counts td').allTextContents()).toEqual(['1', '0', '0', '0']);
      // The confirmation step is a plain form too; a wrong word deletes nothing.
      await page.goto(`${server.url}/data/delete`);
      await page.fill('#confirm', 'no');
      await page.click('button:has-text("Delete everything")');
      expect(await page.locator('.error').textContent()).toBe('Type “delete” to confirm. Nothing was deleted.');
    } finally {
      await context.close();
    }
  });

  it('fits a phone screen (375 px), every screen', async () => {
    const { context, page } = await signedInContext(ALICE, { viewport: PHONE, isMobile: true });
    try {
      for (const [path, name] of [
        ['/', 'phone-memories'],
        [`/memories/${aliceIds[24]}`, 'phone-memory'],
        ['/history', 'phone-history'],
        ['/data', 'phone-data'],
        ['/data/delete', 'phone-delete'],
      ] as const) {
        await page.goto(`${server.url}${path}`);
        // Nothing wider than the screen: no sideways scrolling.
        expect(await page.evaluate('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(PHONE.width);
        await shot(page, name);
      }
      await page.goto(`${server.url}/?q=tea`);
      await shot(page, 'phone-search');
    } finally {
      await context.close();
    }
  });

  it('has no serious or critical accessibility violations (axe-core) on any screen', async () => {
    // Only this context bypasses the CSP, to inject the checker.
    const { context, page } = await signedInContext(ALICE, { bypassCSP: true });
    const welcome = await chromium.newContext({ bypassCSP: true });
    try {
      const screens = ['/', '/?q=tea', '/?tag=garden', `/memories/${aliceIds[24]}`, '/history', '/data', '/data/delete'];
      for (const path of screens) {
        await page.goto(`${server.url}${path}`);
        expect(await seriousViolations(page), path).toEqual([]);
      }
      // Keyboard: the first Tab reaches the skip link, the next ones the navigation, in reading order.
      await page.goto(`${server.url}/`);
      const order: string[] = [];
      for (let i = 0; i < 5; i++) {
        await page.keyboard.press('Tab');
        order.push(String(await page.evaluate("(document.activeElement?.textContent ?? '').trim()")));
      }
      expect(order).toEqual(['Skip to content', 'memory-service', 'Memories', 'Corrected & forgotten', 'Your data']);
      const signedOut = await welcome.newPage();
      await signedOut.goto(`${server.url}/`);
      expect(await seriousViolations(signedOut)).toEqual([]);
      await shot(signedOut, 'welcome');
    } finally {
      await welcome.close();
      await context.close();
    }
  });

  it('signs out: the session is gone from the database, so its cookie no longer works', async () => {
    const { context, page } = await signedInContext(BOB);
    const cookie = (await context.cookies(server.url)).find((candidate) => candidate.name === 'memory-session')!;
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(/signed-out/);
    expect(await page.locator('.notice').textContent()).toBe('You are signed out.');
    const replayed = await fetch(`${server.url}/data`, { headers: { cookie: `memory-session=${cookie.value}` }, redirect: 'manual' });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/auth/sign-in?next=%2Fdata');
    await context.close();
  });

  it('ends the sessions of a removed user at once', async () => {
    const users = new UserStore(usersFilePath(server.config.dataDir));
    await users.add('dave', 'dave flies kites on sundays');
    const { context, page } = await signedInContext({ username: 'dave', password: 'dave flies kites on sundays' });
    users.remove('dave');
    await page.goto(`${server.url}/history`);
    expect(page.url()).toContain('/oauth/interaction/');
    await context.close();
  });

  it('shows the texts kept as restating a memory under it, and makes one a memory of its own, with its CSRF token', async () => {
    const { page } = alice;
    const penicillin = aliceIds[22]!;
    for (const text of ['Alice is allergic to penicillin.', 'alice is allergic to Penicillin!']) {
      const { structured } = await server.call(alice.token, 'remember', { text, tags: ['allergy'], dedup_policy: 'skip_if_near' });
      expect(structured).toMatchObject({ memory_id: penicillin, message: 'Already remembered', matched_text: 'Alice is allergic to penicillin' });
    }
    const listed = await server.call(alice.token, 'list_memories', { tags: ['health'] });
    const [memory] = listed.structured.memories as { memory_id: number; restatements: { restatement_id: number; text: string }[] }[];
    expect(memory!.restatements.map((restatement) => restatement.text)).toEqual(['Alice is allergic to penicillin.', 'alice is allergic to Penicillin!']);
    const [first, second] = memory!.restatements;

    await page.goto(`${server.url}/?tag=health`);
    expect(await page.locator(`#memory-${penicillin} .restatements .memory-text`).allTextContents()).toEqual(['Alice is allergic to penicillin.', 'alice is allergic to Penicillin!']);
    await shot(page, 'restatements');
    // A forged form changes nothing.
    const forged = await page.request.post(`${server.url}/restatements/${first!.restatement_id}/separate`, { form: { csrf: await csrfOf(bob.page) } });
    expect(forged.status()).toBe(403);
    // Nor may Bob separate Alice's restatement with his own token.
    await bob.page.goto(`${server.url}/`);
    const bobs = await bob.page.request.post(`${server.url}/restatements/${first!.restatement_id}/separate`, { form: { csrf: await csrfOf(bob.page) } });
    expect(bobs.status()).toBe(404);

    await page.click(`#restatement-${first!.restatement_id} button:has-text("Make this a memory of its own")`);
    await page.waitForURL(/done=separated/);
    const separated = Number(/id=(\d+)/.exec(page.url())![1]);
    expect(await page.locator('.notice').textContent()).toBe(`That text is now memory ${separated}, a memory of its own.`);
    expect(await page.locator(`#memory-${separated} > .memory-text`).textContent()).toBe('Alice is allergic to penicillin.');
    const after = await server.call(alice.token, 'list_memories', { tags: ['allergy'] });
    expect(after.structured.memories).toEqual([expect.objectContaining({ memory_id: separated, text: 'Alice is allergic to penicillin.', tags: ['allergy'], restatements: [] })]);
    const health = await server.call(alice.token, 'list_memories', { tags: ['health'] });
    expect((health.structured.memories as { restatements: { restatement_id: number }[] }[])[0]!.restatements.map((restatement) => restatement.restatement_id)).toEqual([second!.restatement_id]);
  });

  it('deletes all data after a typed confirmation: nothing of the person is left in any table, others are intact', async () => {
    const { page } = alice;
    // A recall, so that her recall counts are there to be deleted too.
    await server.call(alice.token, 'recall', { query: 'anything at all', limit: 1 });
    // Counted within a quarter of a second of the answer (RecallCounts).
    await expect.poll(async () => (await rowsOf(server, engine, alice.id)).memory_recalls).toBeGreaterThan(0);
    const bobBefore = await rowsOf(server, engine, bob.id);
    const aliceBefore = await rowsOf(server, engine, alice.id);
    expect(aliceBefore.memories).toBeGreaterThan(0);
    expect(aliceBefore.memory_recalls).toBeGreaterThan(0);
    expect(aliceBefore.tombstones).toBeGreaterThan(0);
    expect(aliceBefore.memory_terms).toBeGreaterThan(0);
    expect(aliceBefore.memory_restatements).toBe(1);
    expect(aliceBefore.subject_stats).toBe(1);
    expect(aliceBefore.web_sessions).toBeGreaterThan(0);

    await page.goto(`${server.url}/data`);
    await page.click('a:has-text("Delete all my data")');
    await shot(page, 'delete');
    await page.fill('#confirm', 'yes please');
    await page.click('button:has-text("Delete everything")');
    expect(await page.locator('.error').textContent()).toBe('Type “delete” to confirm. Nothing was deleted.');
    expect(await rowsOf(server, engine, alice.id)).toEqual(aliceBefore);

    await page.fill('#confirm', 'delete');
    await page.click('button:has-text("Delete everything")');
    await page.waitForURL(`${server.url}/?deleted=1`);
    expect(await page.locator('.notice').textContent()).toBe('All your data was deleted, and you were signed out.');
    await shot(page, 'deleted');
    const after = await rowsOf(server, engine, alice.id);
    expect(Object.keys(after).sort()).toEqual(['memories', 'memory_recalls', 'memory_restatements', 'memory_terms', 'memory_terms_pending', 'subject_stats', 'tombstones', 'web_sessions']);
    expect(Object.values(after).every((count) => count === 0)).toBe(true);
    // Bob's data, sessions included, is as it was (his memories were not touched; his session count may only have grown).
    const bobAfter = await rowsOf(server, engine, bob.id);
    expect({ ...bobAfter, web_sessions: 0 }).toEqual({ ...bobBefore, web_sessions: 0 });
    const stillBob = await server.call(bob.token, 'recall', { query: 'Heron', limit: 1 });
    expect(JSON.stringify(stillBob.structured)).toContain('Heron');
    // Her tokens went with her data; with a new one (from the next second on), the tools agree she has nothing.
    const listAll = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_memories', arguments: { include_expired: true } } };
    expect((await server.post(listAll, { authorization: `Bearer ${alice.token}` })).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const empty = await server.call(await server.token(alice.id), 'list_memories', { include_expired: true });
    expect(empty.structured.memories).toEqual([]);
  });
});
