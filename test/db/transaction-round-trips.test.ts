import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { dropSchema } from '../helpers/drop-schema.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * How a transaction travels to PostgreSQL (guarded-pool.ts): its start goes in the round trip of its row-level
 * settings, sent as escaped literals; a read-only transaction's commit is not waited for, and its connection goes
 * back to the pool only once the server has answered it. PGlite has no round trips and no pool.
 */
describe.skipIf(TEST_DATABASE_URL === undefined)('a transaction on PostgreSQL, round trip by round trip', () => {
  let proxy: TcpProxy;
  let db: DatabaseHandle;
  const schema = uniqueSchema();
  const sent: string[] = [];
  /** Whether each statement's answer has come. */
  const answered: boolean[] = [];
  const originalQuery = pg.Client.prototype.query;

  beforeAll(async () => {
    const target = new URL(TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase({ url: proxy.via(TEST_DATABASE_URL!), dataDir: 'memory://', schema, embeddingDimensions: 3, poolSize: 1, statementTimeoutMs: 2_000 });
    // Every statement the driver sends, as the server receives it (one entry per round trip).
    (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      const [config] = args as [{ text?: string } | string];
      sent.push(typeof config === 'string' ? config : (config.text ?? ''));
      const index = answered.push(false) - 1;
      const answer = (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
      if (answer instanceof Promise) void answer.finally(() => (answered[index] = true)).catch(() => undefined);
      return answer;
    };
  });
  afterEach(() => {
    sent.length = 0;
    answered.length = 0;
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

  it('starts the transaction in the round trip of its settings: start and settings, the statement, its id, commit', async () => {
    const settings = await db.withSubject('alice', 'reading', settingsOf);
    expect(settings).toMatchObject({ subject: 'alice', everyone: 'off' });
    expect(sent).toHaveLength(4);
    expect(sent[0]).toMatch(/^begin;\s*select set_config\('search_path'/);
    expect(sent[2]).toMatch(/pg_current_xact_id_if_assigned/);
    expect(sent[3]).toBe('commit');
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
    expect(sent[0]).toMatch(/^start transaction read only;\s*select set_config/);
    expect(sent.at(-1)).toBe('commit');
    expect(answered).toEqual([true, true, false]);
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
});
