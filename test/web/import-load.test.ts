import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser as ChromiumBrowser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { browserSkipReason, launchChromium, type Credentials } from '../helpers/browser.js';
import { dropSchema } from '../helpers/drop-schema.js';
import { engines, TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { freePort } from '../helpers/test-server.js';
import { csrfOf, signInOnPage } from '../helpers/web-page.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

/**
 * The page's import under the hostile shapes of issue 38 (finding 2), in a server process of its own: while a
 * 10 MB file of each shape is imported (and two at once), /healthz polled from here answers within the bound and
 * the server's resident memory grows by less than 200 MB. Before the fix: 23–60 s stalls and 3–4 GB.
 */
const MB = 1024 * 1024;
/**
 * The bound is 100 ms, which a quiet machine meets (20–140 ms measured at load 2). The margin is for a
 * machine shared with other test runs: at load 30 on 2 cores, /healthz of an idle server took up to 120 ms and,
 * during two imports, up to 1.3 s, the server's turns being short but its process waiting for a core. Before the
 * fix one import held it 23 s and more.
 */
const HEALTHZ_BOUND_MS = 2_500;
const RSS_GROWTH_BOUND = 200 * MB;

const USERS: Credentials[] = ['alice', 'bob', 'carol'].map((username) => ({ username, password: `${username} has a long enough password` }));

/** 10 million blank lines. */
const blankLines = () => Buffer.alloc(10 * MB, '\n');
/** One memory.jsonl entity line of 10 MB: about 2.6 million observations. */
function hugeEntity(): Buffer {
  const head = '{"type":"entity","name":"n","entityType":"t","observations":[';
  const count = Math.floor((10 * MB - head.length - 2) / 4);
  return Buffer.from(`${head}${'"a",'.repeat(count - 1)}"a"]}\n`);
}
/** One entity within the line limit with more observations than one entity may have. */
const manyObservations = () => Buffer.from(`{"type":"entity","name":"n","entityType":"t","observations":[${Array.from({ length: 20_000 }, (_, i) => `"o${i}"`).join(',')}]}\n`);

function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) * 1024;
}

describe.skipIf(skip !== undefined).each(engines)('page import under hostile files on %s', (engine) => {
  let dir: string;
  let openai: FakeOpenAIServer;
  let server: ServeProcess;
  let chromium: ChromiumBrowser;
  const schema = uniqueSchema();
  const people: { context: BrowserContext; csrf: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-service-import-load-'));
    openai = await startFakeOpenAIServer({ dimensions: 8 });
    for (const user of USERS) await new UserStore(usersFilePath(dir)).add(user.username, user.password);
    const port = await freePort();
    server = await startServeProcess(port, {
      MEMORY_SERVICE_BASE_URL: `http://127.0.0.1:${port}`,
      MEMORY_SERVICE_DATA_DIR: dir,
      ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : {}),
      MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai',
      MEMORY_SERVICE_EMBEDDING_MODEL: 'test-embedding-8',
      MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '8',
      MEMORY_SERVICE_OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'sk-test-import-load',
      MEMORY_SERVICE_WEB_IMPORT_MAX_BYTES: String(11 * MB),
      MEMORY_SERVICE_MAX_MEMORIES_PER_SUBJECT: '3',
    });
    chromium = await launchChromium();
    for (const user of USERS) {
      const context = await chromium.newContext();
      context.setDefaultTimeout(30_000);
      const page = await context.newPage();
      await signInOnPage(page, server.address, user);
      await page.goto(`${server.address}/data`);
      people.push({ context, csrf: await csrfOf(page) });
    }
  }, 240_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.stop();
    await openai?.close();
    if (engine === 'postgres') await dropSchema(schema, TEST_DATABASE_URL!);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /**
   * The page's import form sent with Node's fetch and the person's session cookie (playwright's request API would
   * serialise the 10 MB file on this process's event loop, which the /healthz poll shares).
   */
  const cookieOf = async (person: number) => (await people[person]!.context.cookies(server.address)).map(({ name, value }) => `${name}=${value}`).join('; ');
  const post = async (person: number, file: Buffer) => {
    const { csrf } = people[person]!;
    const cookie = await cookieOf(person);
    const form = new FormData();
    form.append('csrf', csrf);
    form.append('file', new Blob([file], { type: 'application/jsonl' }), 'memory.jsonl');
    const response = await fetch(`${server.address}/data/import`, { method: 'POST', headers: { cookie, origin: server.address }, body: form });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
  };

  /** Runs `work` while polling /healthz and the server's RSS; the slowest answer and the growth over the start. */
  async function underLoad<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number; rssGrowth: number }> {
    const startRss = rssOf(server.pid);
    let peakRss = startRss;
    let slowestMs = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await fetch(`${server.address}/healthz`);
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        slowestMs = Math.max(slowestMs, performance.now() - started);
        peakRss = Math.max(peakRss, rssOf(server.pid));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      return { result: await work(), slowestMs, rssGrowth: peakRss - startRss };
    } finally {
      done = true;
      await poll;
    }
  }

  it('10 million blank lines: stops at the line limit, saying so, and /healthz keeps answering', async () => {
    const idle = await underLoad(() => new Promise((resolve) => setTimeout(resolve, 2_000)));
    console.info(`${engine} idle: /healthz at most ${idle.slowestMs.toFixed(1)} ms`);
    const file = blankLines();
    const { result, slowestMs, rssGrowth } = await underLoad(() => post(0, file));
    console.info(`${engine} blank lines: /healthz at most ${slowestMs.toFixed(1)} ms, RSS +${(rssGrowth / MB).toFixed(1)} MB`);
    expect(result.status).toBe(400);
    expect(result.text).toContain('more than 250000 lines');
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
  }, 120_000);

  it('one entity line of 2.6 million observations: refused by its length, and /healthz keeps answering', async () => {
    const file = hugeEntity();
    const { result, slowestMs, rssGrowth } = await underLoad(() => post(0, file));
    console.info(`${engine} huge entity: /healthz at most ${slowestMs.toFixed(1)} ms, RSS +${(rssGrowth / MB).toFixed(1)} MB`);
    expect(result.status).toBe(200);
    expect(result.text).toMatch(/line 1<\/strong>: longer than \d+ bytes/);
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
  }, 120_000);

  it('an entity with more observations than one may have is refused, naming the limit', async () => {
    const response = await post(0, manyObservations());
    expect(response.status).toBe(200);
    expect(response.text).toContain('observations: has more than 10000 entries');
  }, 60_000);

  it('two people at once, each with a hostile file: both answered, /healthz keeps answering', async () => {
    const files = [blankLines(), hugeEntity()];
    const { result, slowestMs, rssGrowth } = await underLoad(() => Promise.all([post(0, files[0]!).then((r) => r.status), post(1, files[1]!).then((r) => r.status)]));
    console.info(`${engine} two at once: /healthz at most ${slowestMs.toFixed(1)} ms, RSS +${(rssGrowth / MB).toFixed(1)} MB`);
    expect(result).toEqual([400, 200]);
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
  }, 120_000);

  it('the data page shows usage and the quota; an import stops at the quota, saying how many were imported', async () => {
    const usage = async () => {
      const text = await (await fetch(`${server.address}/data`, { headers: { cookie: await cookieOf(2) } })).text();
      return /<p class="usage">([^<]*)<\/p>/.exec(text)?.[1];
    };
    expect(await usage()).toBe('You keep 0 memories (0 bytes of text); the most you may keep is 3 memories and 50 MiB of text.');
    const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ type: 'relation', from: `Person${i}`, to: 'Lisbon', relationType: 'lives_in' }));
    const response = await post(2, Buffer.from(lines.join('\n')));
    expect(response.status).toBe(403);
    expect(response.text).toContain('The import stopped: not stored: you keep 3 memories, the most one person may keep here (MaxMemoriesPerSubject)');
    expect(response.text).toMatch(/Memories imported<\/th><td>3</);
    expect(await usage()).toBe('You keep 3 memories (69 bytes of text); the most you may keep is 3 memories and 50 MiB of text.');
  }, 60_000);

  it('one import at a time per person, and at most two in the process: a further one is refused at once, saying why', async () => {
    // Embedding never answers: the first imports hold their slots.
    openai.setMode('hang');
    const memory = Buffer.from('{"type":"entity","name":"n","entityType":"t","observations":["Holds a slot."]}\n');
    const first = post(0, memory);
    await expect.poll(() => openai.inFlight, { timeout: 20_000 }).toBe(1);
    const again = await post(0, memory);
    expect(again.status).toBe(409);
    expect(again.text).toContain('An import of yours is already running');
    const second = post(1, memory);
    await expect.poll(() => openai.inFlight, { timeout: 20_000 }).toBe(2);
    const third = await post(2, memory);
    expect(third.status).toBe(503);
    expect(third.retryAfter).toBe('60');
    expect(third.text).toContain('already running 2 imports');
    openai.setMode('ok');
    // The held imports end when their embedding call times out; they are not waited for.
    void first.catch(() => undefined);
    void second.catch(() => undefined);
  }, 90_000);
});
