import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { dropSchema } from '../helpers/drop-schema.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The network between the service and PostgreSQL misbehaving, through a proxy of the test's: an answer to COMMIT
 * that never arrives (the commit happened, or not), and a connection that stops carrying anything (a cut cable,
 * a frozen host). PostgreSQL itself keeps running, so this needs only TEST_DATABASE_URL.
 */
describe.skipIf(TEST_DATABASE_URL === undefined)('connection faults between the service and PostgreSQL', () => {
  let proxy: TcpProxy;
  let db: DatabaseHandle;
  const schema = uniqueSchema();
  const failures: string[] = [];

  beforeAll(async () => {
    const target = new URL(TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase({
      url: proxy.via(TEST_DATABASE_URL!),
      dataDir: 'memory://',
      schema,
      embeddingDimensions: 3,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
      onDriverError: (failure) => void failures.push(failure.message),
    });
  });
  afterAll(async () => {
    await db?.close();
    await proxy?.close();
    await dropSchema(schema, TEST_DATABASE_URL!);
  });

  const insert = (text: string) =>
    db.withSubject('alice', 'storing the memory', async (trx) => {
      const { rows } = await sql<{ id: string }>`
        insert into memories (subject, text, embedding, embedding_model, embedding_dimensions)
        values ('alice', ${text}, '[1,0,0]', 'm', 3) returning id`.execute(trx);
      return Number(rows[0]!.id);
    });
  const stored = async (text: string) =>
    db.withSubject('alice', 'counting', async (trx) => Number((await sql<{ n: string }>`select count(*) as n from memories where text = ${text}`.execute(trx)).rows[0]!.n));

  it('returns the result of a transaction that committed although the answer to COMMIT was lost', async () => {
    failures.length = 0;
    const cut = proxy.cutAtNextCommit('after');
    const id = await insert('The user parks on level 3');
    await cut;
    expect(id).toBeGreaterThan(0);
    expect(await stored('The user parks on level 3')).toBe(1);
    // The commit's answer was really lost: the driver saw the connection end.
    expect(failures.join('\n')).toMatch(/Connection terminated/);
  });

  it('reports DATABASE_ERROR, nothing changed, when COMMIT never reached the server', async () => {
    const cut = proxy.cutAtNextCommit('before');
    await expect(insert('The user parks on level 4')).rejects.toMatchObject({
      code: 'DATABASE_ERROR',
      message: 'the database failed while storing the memory; nothing was changed',
    });
    await cut;
    expect(await stored('The user parks on level 4')).toBe(0);
  });

  it('answers within the statement deadline while the network carries nothing, and recovers when it does again', async () => {
    proxy.setMode('blackhole');
    try {
      const started = Date.now();
      const results = await Promise.allSettled([insert('The user parks on level 5'), insert('The user parks on level 6'), stored('anything')]);
      const elapsed = Date.now() - started;
      for (const result of results) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'DATABASE_ERROR' });
      }
      // statement_timeout 1 s + 2 s grace on the client, or the 1 s connect timeout for new connections.
      expect(elapsed).toBeLessThan(5_000);
      expect(await db.ready()).toBe(false);
    } finally {
      proxy.setMode('pass');
    }
    // Connections stuck behind the cut were dropped, not handed out again.
    expect(await insert('The user parks on level 7')).toBeGreaterThan(0);
    expect(await stored('The user parks on level 5')).toBe(0);
    expect(await db.ready()).toBe(true);
  });
});
