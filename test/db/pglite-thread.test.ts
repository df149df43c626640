import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import type { DbTransaction } from '../../src/db/schema.js';
import { PGliteEngine } from '../../src/db/pglite-engine.js';
import { PGliteThread } from '../../src/db/pglite-thread.js';
import { sharedPGlite } from '../helpers/shared.js';
import { uniqueSchema } from '../helpers/engines.js';

/**
 * The PGlite the service opens itself (its data folder) runs in a worker thread of its own; a caller's instance
 * (tests share one per file) stays in the caller's thread. PGlite only: PostgreSQL is its own process anyway.
 */
const HEAVY = sql`select count(*)::int as n from generate_series(1, 2000000)`;

/** Runs one heavy statement and counts how often a 5 ms timer fired meanwhile, and its longest silence. */
async function timersDuring(db: DatabaseHandle): Promise<{ ms: number; ticks: number; longestGapMs: number }> {
  let ticks = 0;
  let last = performance.now();
  let longestGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    ticks++;
  }, 5);
  const started = performance.now();
  try {
    const { rows } = await db.withSubject('s', 'counting', (trx) => HEAVY.execute(trx));
    expect(rows).toEqual([{ n: 2_000_000 }]);
  } finally {
    clearInterval(timer);
  }
  longestGapMs = Math.max(longestGapMs, performance.now() - last);
  return { ms: performance.now() - started, ticks, longestGapMs };
}

describe('PGlite in a thread of its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-pglite-thread-'));
  const dataDir = join(dir, 'pglite');
  const events: string[] = [];
  let db: DatabaseHandle;
  const open = () => openDatabase({ dataDir, schema: 'public', embeddingDimensions: 3, onEngineEvent: (event) => void events.push(event) });

  beforeAll(async () => {
    db = await open();
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a statement while the event loop keeps serving; a caller-owned PGlite runs it on the loop', async () => {
    const threaded = await timersDuring(db);
    const caller = await openDatabase({ dataDir: 'memory://', schema: uniqueSchema(), embeddingDimensions: 3, pglite: await sharedPGlite() });
    const inThread = await timersDuring(caller);
    await caller.close();
    // In the thread, the loop is never held for most of the statement; on the loop, it is held for nearly all of it.
    expect(threaded.longestGapMs).toBeLessThan(threaded.ms / 2);
    expect(threaded.ticks).toBeGreaterThan(5);
    expect(inThread.longestGapMs).toBeGreaterThan(inThread.ms / 2);
  }, 120_000);

  it('keeps the fields of PostgreSQL errors, and never the parameters', async () => {
    const text = 'the user keeps the spare key under the blue flowerpot';
    const error = await db
      .withSubject('s', 'dividing', (trx) => sql`select 1 / 0 where ${text}::text is not null`.execute(trx))
      .then(() => undefined, (thrown: unknown) => thrown as Error & { cause?: Record<string, unknown> });
    expect(error).toMatchObject({ code: 'DATABASE_ERROR', message: 'the database failed while dividing; nothing was changed' });
    expect(error?.cause).toMatchObject({ code: '22012', severity: 'ERROR', message: 'division by zero', routine: expect.any(String) });
    expect(error?.cause?.params).toBeUndefined();
    expect(JSON.stringify(Object.entries(error?.cause ?? {}))).not.toContain('flowerpot');
  });

  const insert = (trx: DbTransaction, text: string) =>
    sql`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values ('s', ${text}, '[1,0,0]', 'm', 3)`.execute(trx);
  const texts = async () =>
    (await db.withSubject('s', 'reading', (trx) => sql<{ text: string }>`select text from memories order by id`.execute(trx))).rows.map((row) => row.text);

  it('serialises concurrent transactions on its one connection, and rolls back the ones that fail', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, n) =>
        db.withSubject('s', 'probing', async (trx) => {
          await insert(trx, `note ${n}`);
          // Another transaction between these two statements would see this one's row, or change the count.
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from memories where text = ${`note ${n}`}`.execute(trx);
          await sql`update memories set text = ${`note ${n}: ${rows[0]?.n} of it`} where text = ${`note ${n}`}`.execute(trx);
          if (n % 3 === 0) throw new Error(`refused ${n}`);
          // A statement that fails inside the transaction: the whole transaction goes, the connection stays usable.
          if (n % 3 === 1) await sql`select 1 / 0`.execute(trx);
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array.from({ length: 12 }, (_, n) => (n % 3 === 2 ? 'fulfilled' : 'rejected')));
    expect(await texts()).toEqual([2, 5, 8, 11].map((n) => `note ${n}: 1 of it`));
  });

  it('closes cleanly: what was committed is there when the folder is opened again, and the folder can be reopened at once', async () => {
    await db.withSubject('s', 'storing', (trx) => insert(trx, 'kept'));
    await db.close();
    const closed = await db.withSubject('s', 'reading', (trx) => sql`select 1`.execute(trx)).then(() => undefined, (error: unknown) => error);
    expect(closed).toMatchObject({ code: 'DATABASE_ERROR' });
    db = await open();
    expect((await texts()).at(-1)).toBe('kept');
    expect(await db.ready()).toBe(true);
    expect(events).toEqual([]);
  }, 120_000);
});

describe('a PGlite thread that ends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-pglite-thread-end-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is replaced by a new thread on the same folder: the statement that met the end fails, the next one sees every commit', async () => {
    const events: string[] = [];
    const settings = { dataDir: join(dir, 'pglite'), searchPath: 'public', reopenable: true };
    const threads: PGliteThread[] = [];
    const openThread = async () => {
      const thread = await PGliteThread.open(settings);
      threads.push(thread);
      return thread;
    };
    const engine = new PGliteEngine(await openThread(), {
      reopen: openThread,
      onLost: (reason) => void events.push(`lost: ${reason}`),
      onReopened: () => void events.push('reopened'),
    });
    try {
      await engine.query('create table notes (text text)');
      await engine.query('insert into notes values ($1)', ['committed before the end']);
      await threads[0]!.terminate();

      await expect(engine.query('select text from notes')).rejects.toMatchObject({ name: 'EngineUnavailableError', severity: 'FATAL' });
      expect(engine.available).toBe(false);
      const { rows } = await engine.query<{ text: string }>('select text from notes');
      expect(rows).toEqual([{ text: 'committed before the end' }]);
      expect(engine.available).toBe(true);
      expect(threads).toHaveLength(2);
      expect(events).toEqual([expect.stringMatching(/^lost: .*thread ended/), 'reopened']);
    } finally {
      await engine.close();
    }
  }, 120_000);
});
