import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const stamp = Date.now();
const ALICE = `alice-${stamp}`;
const BOB = `bob-${stamp}`;

describe.each(engines)('subject isolation on %s', (engine) => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  let aliceIds: number[];
  let forgottenId: number;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    alice = await server.token(ALICE);
    bob = await server.token(BOB);
    aliceIds = [];
    for (const text of ['Alice is allergic to peanuts', 'Alice lives at 12 Rosemary Lane', 'Alice has a dog named Pixel']) {
      aliceIds.push((await server.call(alice, 'remember', { text, tags: ['private'], session_id: 'alice-session' })).structured.memory_id as number);
    }
    forgottenId = (await server.call(alice, 'remember', { text: 'Alice once lived in Oslo' })).structured.memory_id as number;
    await server.call(alice, 'forget', { memory_id: forgottenId });
    await server.call(bob, 'remember', { text: 'Bob is allergic to peanuts' });
  });
  afterAll(async () => {
    await server.close();
  });

  const aliceState = () =>
    server.service.db.withSubject(ALICE, 'inspecting rows', async (trx) => ({
      memories: await trx.selectFrom('memories').select(['id', 'text', 'tags', 'last_confirmed_at', 'updated_at']).orderBy('id').execute(),
      tombstones: await trx.selectFrom('tombstones').select(['memory_id', 'reason']).orderBy('id').execute(),
    }));

  it('never shows another subject\'s memories in recall or list_memories, whatever the filters', async () => {
    for (const args of [
      { query: 'Who is allergic to peanuts?', limit: 50 },
      { query: 'Alice', limit: 50 },
      { query: 'Rosemary Lane', tags: ['private'] },
      { query: 'dog', session_id: 'alice-session' },
    ]) {
      const { structured } = await server.call(bob, 'recall', args);
      expect((structured.memories as { text: string }[]).map((memory) => memory.text).filter((text) => text.includes('Alice'))).toEqual([]);
    }
    const listed = await server.call(bob, 'list_memories', { limit: 100, include_expired: true });
    expect((listed.structured.memories as { text: string }[]).map((memory) => memory.text)).toEqual(['Bob is allergic to peanuts']);
    const filtered = await server.call(bob, 'list_memories', { tags: ['private'] });
    expect(filtered.structured.memories).toEqual([]);
  });

  it('answers every tool on another subject\'s ids exactly as for ids that do not exist, changing nothing', async () => {
    const before = await aliceState();
    const missing = 9_000_000_000 + Math.floor(Math.random() * 1000);
    const attempts: [string, (id: number) => Record<string, unknown>][] = [
      ['forget', (id) => ({ memory_id: id, reason: 'bob wants it gone' })],
      ['correct', (id) => ({ memory_id: id, text: 'Alice is not allergic to anything' })],
      ['confirm', (id) => ({ memory_id: id })],
    ];
    for (const [tool, args] of attempts) {
      for (const id of [...aliceIds, forgottenId]) {
        const theirs = await server.call(bob, tool, args(id));
        expect(theirs, `${tool} ${id}`).toEqual({ isError: true, structured: { ok: false, error: { code: 'NOT_FOUND', message: `memory ${id} not found` } } });
      }
      const nonexistent = await server.call(bob, tool, args(missing));
      expect(nonexistent).toEqual({ isError: true, structured: { ok: false, error: { code: 'NOT_FOUND', message: `memory ${missing} not found` } } });
    }
    expect(await aliceState()).toEqual(before);
    // And bob got nothing out of it: no memory was written for him by the failed correct.
    const bobs = await server.call(bob, 'list_memories', {});
    expect((bobs.structured.memories as unknown[]).length).toBe(1);
  });

  it('does not let a cursor from another subject\'s listing reveal anything', async () => {
    const page = await server.call(alice, 'list_memories', { limit: 1 });
    const cursor = page.structured.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const { structured } = await server.call(bob, 'list_memories', { cursor });
    expect((structured.memories as { text: string }[]).every((memory) => memory.text.startsWith('Bob'))).toBe(true);
  });

  it('does not report another subject\'s tombstones in previously_corrected', async () => {
    const { structured } = await server.call(bob, 'remember', { text: 'Alice once lived in Oslo' });
    expect(structured).not.toHaveProperty('previously_corrected');
  });

  describe('row-level security, the second line of defence (queries without any WHERE subject)', () => {
    const asBob = <T>(work: Parameters<typeof server.service.db.withSubject<T>>[2]) => server.service.db.withSubject(BOB, 'inspecting rows', work);

    it('hides every other subject\'s row from an unscoped select', async () => {
      const counts = await asBob(async (trx) => ({
        memories: (await sql<{ subject: string }>`select subject from memories`.execute(trx)).rows,
        tombstones: (await sql<{ subject: string }>`select subject from tombstones`.execute(trx)).rows,
        terms: (await sql<{ subject: string }>`select subject from memory_terms`.execute(trx)).rows,
        stats: (await sql<{ subject: string }>`select subject from subject_stats`.execute(trx)).rows,
        byId: (await sql`select id from memories where id = any(${aliceIds.map(String)}::bigint[])`.execute(trx)).rows,
      }));
      expect(counts.memories.length).toBeGreaterThan(0);
      expect(counts.memories.every((row) => row.subject === BOB)).toBe(true);
      expect(counts.tombstones).toEqual([]);
      expect(counts.terms.length).toBeGreaterThan(0);
      expect(counts.terms.every((row) => row.subject === BOB)).toBe(true);
      expect(counts.stats).toEqual([{ subject: BOB }]);
      expect(counts.byId).toEqual([]);
    });

    it('turns an unscoped update or delete of another subject\'s rows into a no-op', async () => {
      const before = await aliceState();
      const changed = await asBob(async (trx) => ({
        updated: (await sql`update memories set text = 'overwritten' where id = ${aliceIds[0]!} returning id`.execute(trx)).rows,
        deleted: (await sql`delete from memories where id = ${aliceIds[1]!} returning id`.execute(trx)).rows,
        tombstones: (await sql`delete from tombstones where memory_id = ${forgottenId} returning id`.execute(trx)).rows,
      }));
      expect(changed).toEqual({ updated: [], deleted: [], tombstones: [] });
      expect(await aliceState()).toEqual(before);
    });

    /** The database refused it under row-level security, and the database layer reported it as DATABASE_ERROR. */
    const refusedByRowLevelSecurity = async (work: Promise<unknown>) => {
      const error = await work.then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).code).toBe('DATABASE_ERROR');
      expect(((error as ServiceError).cause as Error).message).toMatch(/row-level security/);
    };

    it('refuses to write a row for another subject, or to move a row to another subject', async () => {
      await refusedByRowLevelSecurity(
        asBob((trx) =>
          sql`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions)
              values (${ALICE}, 'planted by bob', '[1,0,0]', 'x', 3)`.execute(trx),
        ),
      );
      await refusedByRowLevelSecurity(
        asBob((trx) =>
          sql`insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
              values (424242, ${ALICE}, 'planted by bob', '[1,0,0]', 'x', 3, 'forgotten', now())`.execute(trx),
        ),
      );
      await refusedByRowLevelSecurity(asBob((trx) => sql`update memories set subject = ${ALICE}`.execute(trx)));
      await refusedByRowLevelSecurity(
        asBob((trx) => sql`insert into memory_terms (subject, lexeme, memory_id) values (${ALICE}, 'planted', ${aliceIds[0]!})`.execute(trx)),
      );
      const mine = await asBob((trx) => sql<{ subject: string }>`select subject from memories`.execute(trx));
      expect(mine.rows.every((row) => row.subject === BOB)).toBe(true);
      expect((await aliceState()).memories.map((row) => row.text)).not.toContain('planted by bob');
    });

    it('shows nothing at all when no subject is set', async () => {
      const rows = await server.service.db.withSubject('', 'inspecting rows', (trx) => sql`select id from memories`.execute(trx));
      expect(rows.rows).toEqual([]);
    });
  });
});
