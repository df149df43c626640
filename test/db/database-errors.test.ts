import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverErrorInfo } from '../../src/db/driver-errors.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { ServiceError } from '../../src/errors.js';
import { TEST_DATABASE_URL, engines, type Engine } from '../helpers/engines.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * The database layer reports a failure of the database (an error the server sent, or a lost connection) as
 * DATABASE_ERROR, logged by message and code only; anything else thrown inside a transaction is a bug and
 * propagates as it is. Either way the transaction is rolled back.
 */
interface LoggedError {
  readonly failure: DriverErrorInfo;
  readonly activity: string;
}

async function open(engine: Engine, logged: LoggedError[], options: { schema?: string; ownPglite?: boolean } = {}): Promise<DatabaseHandle> {
  return openTestDatabase(engine, {
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    // Its own PGlite (undefined: openDatabase opens one), to be lost without losing the file's shared one.
    ...(options.ownPglite === true ? { pglite: undefined } : {}),
    onDriverError: (failure, activity) => void logged.push({ failure, activity }),
  });
}

async function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe.each(engines)('errors inside a subject transaction on %s', (engine) => {
  let db: DatabaseHandle;
  const logged: LoggedError[] = [];

  beforeAll(async () => {
    db = await open(engine, logged);
  });
  afterAll(() => closeTestDatabase(db));

  const insert = (trx: Parameters<Parameters<DatabaseHandle['withSubject']>[2]>[0], text: string) =>
    sql`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values ('alice', ${text}, '[1,0,0]', 'm', 3)`.execute(trx);
  const count = () => db.withSubject('alice', 'counting', async (trx) => Number((await sql<{ n: string }>`select count(*) as n from memories`.execute(trx)).rows[0]?.n));

  it('reports an error the server sent as DATABASE_ERROR naming the activity, logged by message and code only', async () => {
    logged.length = 0;
    const error = await failure(
      db.withSubject('alice', 'storing the memory', async (trx) => {
        await insert(trx, 'The user hides a key under the mat');
        return sql`select 1 / 0`.execute(trx);
      }),
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'DATABASE_ERROR', message: 'the database failed while storing the memory; nothing was changed' });
    expect(logged).toEqual([{ failure: { message: 'division by zero', code: '22012' }, activity: 'storing the memory' }]);
    expect(JSON.stringify(logged)).not.toContain('mat');
    expect(await count()).toBe(0);
  });

  it('lets a bug in our code propagate as it is, not as a database failure, and rolls back', async () => {
    logged.length = 0;
    const bug = new RangeError('one weight per ranking');
    const error = await failure(
      db.withSubject('alice', 'recalling memories', async (trx) => {
        await insert(trx, 'The user likes tea');
        throw bug;
      }),
    );
    expect(error).toBe(bug);
    expect(logged).toEqual([]);
    expect(await count()).toBe(0);
  });

  it('refuses a write in a read-only transaction, which still reads under the subject', async () => {
    logged.length = 0;
    await db.withSubject('alice', 'storing the memory', (trx) => insert(trx, 'The user likes tea'));
    expect(await db.withSubject('alice', 'recalling memories', async (trx) => (await sql<{ text: string }>`select text from memories`.execute(trx)).rows, { readOnly: true })).toEqual([
      { text: 'The user likes tea' },
    ]);
    expect(await db.withSubject('bob', 'recalling memories', async (trx) => (await sql`select text from memories`.execute(trx)).rows, { readOnly: true })).toEqual([]);
    const error = await failure(db.withSubject('alice', 'recalling memories', (trx) => insert(trx, 'The user likes coffee'), { readOnly: true }));
    expect(error).toMatchObject({ code: 'DATABASE_ERROR', message: 'the database failed while recalling memories; nothing was changed' });
    expect(logged.map((entry) => entry.failure.code)).toEqual(['25006']);
    expect(await count()).toBe(1);
    await db.withSubject('alice', 'forgetting the memory', (trx) => sql`delete from memories`.execute(trx));
  });

  it('keeps a ServiceError raised inside as it is', async () => {
    const notFound = new ServiceError('NOT_FOUND', 'memory 7 not found');
    expect(await failure(db.withSubject('alice', 'forgetting the memory', () => Promise.reject(notFound)))).toBe(notFound);
  });

  it.runIf(engine === 'pglite')('reports a closed database as DATABASE_ERROR', async () => {
    const lostLog: LoggedError[] = [];
    const lost = await open(engine, lostLog, { ownPglite: true });
    await lost.close();
    const error = await failure(lost.withSubject('alice', 'listing memories', async (trx) => sql`select 1`.execute(trx)));
    expect(error).toMatchObject({ code: 'DATABASE_ERROR', message: 'the database failed while listing memories; nothing was changed' });
    expect(lostLog.map((entry) => entry.failure.message)).toEqual(['PGlite is closed']);
  });

  it.runIf(engine === 'postgres')('reports a connection lost in the middle of a transaction as DATABASE_ERROR, and carries on', async () => {
    logged.length = 0;
    const error = await failure(
      db.withSubject('alice', 'correcting the memory', async (trx) => {
        await insert(trx, 'The user likes tea');
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        // What a server restart does to the connection: the backend ends between two statements.
        const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await admin.connect();
        try {
          await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        } finally {
          await admin.end();
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
        return sql`select 1`.execute(trx);
      }),
    );
    expect(error).toMatchObject({ code: 'DATABASE_ERROR', message: 'the database failed while correcting the memory; nothing was changed' });
    expect(logged.map((entry) => entry.activity)).toContain('correcting the memory');
    // The process is still up, and the next transaction gets a fresh connection.
    expect(await count()).toBe(0);
  });
});
