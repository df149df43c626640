import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { guardedPool, withNext } from '../../src/db/guarded-pool.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { dropSchema } from '../helpers/drop-schema.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { gatedEmbedder } from '../helpers/gated-embedder.js';
import { newMemory } from '../helpers/memories.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * How a transaction travels to PostgreSQL (guarded-pool.ts): its start and its row-level settings (escaped
 * literals) go in the round trip of its first statement, joined to it when it has no parameters, written with it
 * (pipelined) when it has; a read-only transaction's commit is not waited for, and its connection goes back to the
 * pool only once the server has answered it. PGlite has no round trips and no pool.
 */
describe.skipIf(TEST_DATABASE_URL === undefined)('a transaction on PostgreSQL, round trip by round trip', () => {
  let proxy: TcpProxy;
  let db: DatabaseHandle;
  const schema = uniqueSchema();
  const sent: string[] = [];
  /** Whether each statement's answer has come. */
  const answered: boolean[] = [];
  /** The round trip each statement went in: a new one when nothing was awaiting an answer as it was written. */
  const trips: number[] = [];
  const unanswered = () => answered.filter((done) => !done).length;
  const originalQuery = pg.Client.prototype.query;

  beforeAll(async () => {
    const target = new URL(TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase({ url: proxy.via(TEST_DATABASE_URL!), dataDir: 'memory://', schema, embeddingDimensions: 3, poolSize: 1, statementTimeoutMs: 2_000 });
    // Every statement the driver sends, as the server receives it (one entry per round trip).
    (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      const [config] = args as [{ text?: string } | string];
      sent.push(typeof config === 'string' ? config : (config.text ?? ''));
      trips.push((trips.at(-1) ?? 0) + (unanswered() === 0 ? 1 : 0));
      const index = answered.push(false) - 1;
      const answer = (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
      if (answer instanceof Promise) void answer.finally(() => (answered[index] = true)).catch(() => undefined);
      return answer;
    };
  });
  afterEach(() => {
    sent.length = 0;
    answered.length = 0;
    trips.length = 0;
  });
  afterAll(async () => {
    pg.Client.prototype.query = originalQuery;
    await db?.close();
    await proxy?.close();
    await dropSchema(schema, TEST_DATABASE_URL!);
  });

  const settingsOf = (trx: Parameters<Parameters<DatabaseHandle['withSubject']>[2]>[0]) =>
    sql<{ subject: string; everyone: string; role: string }>`
      select current_setting('memory_service.subject') as subject, current_setting('memory_service.all_subjects') as everyone, current_user as role`
      .execute(trx)
      .then(({ rows }) => rows[0]!);

  it('joins start and settings to a first statement without parameters: that statement, its id, commit', async () => {
    const settings = await db.withSubject('alice', 'reading', settingsOf);
    expect(settings).toMatchObject({ subject: 'alice', everyone: 'off' });
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^begin;\s*\/\* with the next statement \*\/ select set_config\('search_path'[^;]*;\s*select current_setting/);
    expect(sent[1]).toMatch(/pg_current_xact_id_if_assigned/);
    expect(sent[2]).toBe('commit');
    expect(trips).toEqual([1, 2, 3]);
  });

  it('writes start and settings with a first statement that has parameters: one round trip for both', async () => {
    const read = await db.withSubject('alice', 'reading', async (trx) => {
      const { rows } = await sql<{ subject: string; echoed: string }>`select current_setting('memory_service.subject') as subject, ${"it's"}::text as echoed`.execute(trx);
      return rows[0]!;
    }, { readOnly: true });
    expect(read).toEqual({ subject: 'alice', echoed: "it's" });
    expect(sent[0]).toMatch(/^start transaction read only;\s*\/\* with the next statement \*\/ select set_config/);
    expect(sent[1]).toMatch(/^select current_setting/);
    expect(sent.at(-1)).toBe('commit');
    expect(trips).toEqual([1, 1, 2]);
  });

  it('sets a subject verbatim, however it is quoted, and nothing else with it', async () => {
    const hostile = `x', true), set_config('memory_service.all_subjects', 'on', true), set_config('a.b', E'\\\\'' ; select '"`;
    const settings = await db.withSubject(hostile, 'reading', settingsOf);
    expect(settings.subject).toBe(hostile);
    expect(settings.everyone).toBe('off');
  });

  it('answers a read-only transaction before its commit is answered, and the next transaction starts clean', async () => {
    const first = await db.withSubject('alice', 'reading', settingsOf, { readOnly: true });
    expect(first.subject).toBe('alice');
    expect(sent[0]).toMatch(/^start transaction read only;\s*\/\* with the next statement \*\/ select set_config/);
    expect(sent.at(-1)).toBe('commit');
    expect(answered).toEqual([true, false]);
    // One connection: the next transaction waits for the commit, then runs under its own settings, writable.
    const second = await db.withSubject('bob', 'writing', async (trx) => {
      await sql`create temporary table scratch (n int) on commit drop`.execute(trx);
      return settingsOf(trx);
    });
    expect(second.subject).toBe('bob');
  });

  it('loses nothing when the answer to a read-only commit is lost: the answer stands, the connection is replaced', async () => {
    const cut = proxy.cutAtNextCommit('after');
    const settings = await db.withSubject('alice', 'reading', settingsOf, { readOnly: true });
    await cut;
    expect(settings.subject).toBe('alice');
    expect((await db.withSubject('carol', 'reading', settingsOf)).subject).toBe('carol');
  });

  it('fails a statement on a connection whose last answer never came without waiting out another deadline', async () => {
    proxy.setMode('blackhole');
    const started = Date.now();
    try {
      await expect(db.withSubject('alice', 'reading', settingsOf)).rejects.toMatchObject({ code: 'DATABASE_ERROR' });
    } finally {
      proxy.setMode('pass');
    }
    // The settings' round trip waits out the client's deadline (statement timeout + grace); the rollback does not.
    expect(Date.now() - started).toBeLessThan(2 * 2_000 + 1_000);
    expect((await db.withSubject('dave', 'reading', settingsOf)).subject).toBe('dave');
  });

  it('answers a recall after 3 round trips, a question with a word no memory uses, in a conversation, or whose bridge finds a name', async () => {
    // Recall counts written right after each answer, so that none is written while the next recall is counted.
    const service = new MemoryService({ db, embedder: gatedEmbedder('round-trips', 1).embedder, nearDuplicateThreshold: 0.99, recallCountsDelayMs: 0 });
    const facts = ["The user's son Theo is 9 and plays the violin.", "Theo's teacher is Mr Bell.", 'The user grows basil and mint on the balcony.'];
    for (const text of facts) await service.remember('trips', newMemory(text), 'insert');
    await service.remember('trips-chat', { ...newMemory('Melanie: What did you paint?'), sessionId: 'chat-1' }, 'insert');
    await service.remember('trips-chat', { ...newMemory('Caroline: A lake at sunrise.'), sessionId: 'chat-1' }, 'insert');
    const tripsOf = async (subject: string, query: string) => {
      // The last transaction's commit and the recall counts written after an answer (recall-counts.ts) first.
      while (unanswered() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 50));
      sent.length = 0;
      trips.length = 0;
      answered.length = 0;
      const result = await service.recall(subject, { query, limit: 5, maxChars: 8000, filters: NO_FILTERS });
      // The read-only commit, still unanswered, is not waited for.
      return { trips: (trips.at(-1) ?? 0) - (unanswered() > 0 ? 1 : 0), found: result.memories.length };
    };
    expect(await tripsOf('trips', 'Which herbs does the user grow?')).toEqual({ trips: 3, found: 3 });
    // The bridge searches by the name the first results give the son ("Theo"), in the results' statement.
    expect(await tripsOf('trips', "Who teaches the user's son?")).toEqual({ trips: 3, found: 3 });
    expect(await tripsOf('trips-chat', 'What did Caroline paint?')).toEqual({ trips: 3, found: 2 });
  });

  it('fails the first statement with the settings\' own error when they fail, not with the aborted transaction\'s', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, pipeline: true });
    const client = await guardedPool(pool, 2_000).connect();
    try {
      await client.query('begin', []);
      await client.query(withNext('select 1 / 0'), []);
      await expect(client.query('select $1::int as n', [1])).rejects.toMatchObject({ code: '22012' });
      await client.query('rollback', []);
      expect((await client.query<{ n: number }>('select $1::int as n', [2])).rows).toEqual([{ n: 2 }]);
    } finally {
      client.release();
      await pool.end();
    }
  });
});
