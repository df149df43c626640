import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMemoryNearTombstones } from '../../src/db/memories/memories.js';
import { continueMemoryTerms } from '../../src/db/memories/memory-terms.js';
import { questionWordLookups } from '../../src/db/memories/text-ranking.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector } from '../../src/db/pgvector.js';
import type { DbTransaction } from '../../src/db/schema.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { TEST_DATABASE_URL, engines } from '../helpers/engines.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase, sharedPGlite } from '../helpers/shared.js';
import { startTestServer } from '../helpers/test-server.js';

/**
 * memory_terms (the full-text ranking's inverted index) follows memories by trigger alone, with no foreign key
 * (migration 0011): inserting, changing, deleting and truncating memories must keep it exactly in step. A long
 * text's rows may be written in steps, each a transaction of its own (migration 0012).
 */

/** One vector for every text: these tests are about words. */
const oneVector: EmbeddingProvider = {
  model: 'm',
  dimensions: 3,
  embed: async (texts) => texts.map(() => [1, 0, 0]),
  ready: async () => undefined,
  close: async () => undefined,
};
/** A text of about `facts` × 4 distinct lexemes. */
const longText = (facts: number, seed = 0) =>
  Array.from({ length: facts }, (_, i) => `Fact ${seed}-${i}: the user visited place${seed}x${i} with friend${seed}y${i} in month${i % 12}.`).join(' ');
describe.each(engines)('memory_terms kept in step with memories on %s', (engine) => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openTestDatabase(engine);
  });
  afterAll(() => closeTestDatabase(db));

  const insert = (subject: string, text: string) =>
    db.withSubject(subject, 'inserting', async (trx) => {
      const { rows } = await sql<{ id: string }>`
        insert into memories (subject, text, embedding, embedding_model, embedding_dimensions)
        values (${subject}, ${text}, '[1,0,0]', 'm', 3) returning id`.execute(trx);
      return rows[0]!.id;
    });
  /** Every memory_terms row as "subject memory lexeme", and whether each names a memory that exists. */
  const terms = () =>
    db.withAllSubjects('reading terms', async (trx) => {
      const { rows } = await sql<{ row: string; orphan: boolean }>`
        select memory_terms.subject || ' ' || memory_terms.memory_id || ' ' || lexeme as row,
               not exists (select from memories where memories.id = memory_terms.memory_id) as orphan
          from memory_terms order by memory_terms.memory_id, lexeme`.execute(trx);
      expect(rows.filter((row) => row.orphan)).toEqual([]);
      return rows.map((row) => row.row);
    });

  it("tells whether a subject's memories use a word, and which words they never use (recall's person and meaning look-ups), and only its own", async () => {
    await insert('uses-a', "The user's spouse Jo is a nurse.");
    await insert('uses-b', "The user's partner Kim is a pilot.");
    try {
      // Both look-ups ride in one expression of the statement that reads the subject's size (recall).
      const lookUp = (trx: DbTransaction, subject: string, words: string[], personWords: string[]) =>
        sql<{ found: { unused: string[]; usesPersonWords: boolean } }>`select ${questionWordLookups(subject, words, personWords)} as found`.execute(trx).then(({ rows }) => rows[0]!.found);
      const uses = (subject: string, words: string) => db.withSubject(subject, 'looking up', async (trx) => (await lookUp(trx, subject, [], words.split(' '))).usesPersonWords);
      expect(await uses('uses-a', 'spouse')).toBe(true);
      expect(await uses('uses-a', 'spouses')).toBe(true);
      expect(await uses('uses-a', 'partner')).toBe(false);
      expect(await uses('uses-a', 'wife partner')).toBe(false);
      expect(await uses('uses-a', 'partner spouse')).toBe(true);
      // Another subject's memories say "partner": under row-level security its terms are not this subject's.
      expect(await db.withSubject('uses-a', 'looking up', async (trx) => (await lookUp(trx, 'uses-b', [], ['partner'])).usesPersonWords)).toBe(false);
      // A hyphenated word is used by its whole, not its parts: "nurse-in-law" is not "nurse".
      expect(await uses('uses-a', 'nurse-in-law')).toBe(false);
      expect(await uses('uses-a', 'nurse')).toBe(true);
      // No person word asked: nothing to look up.
      expect(await db.withSubject('uses-a', 'looking up', async (trx) => (await lookUp(trx, 'uses-a', [], [])).usesPersonWords)).toBe(false);

      // Word by word: which of them no memory of the subject uses, in their order; a stop word is never returned.
      const unused = (subject: string, words: string[]) => db.withSubject(subject, 'looking up', async (trx) => (await lookUp(trx, subject, words, [])).unused);
      expect(await unused('uses-a', ['spouses', 'partner', 'nurse', 'pilot', 'the'])).toEqual(['partner', 'pilot']);
      expect(await unused('uses-a', ['pilot', 'partner'])).toEqual(['pilot', 'partner']);
      expect(await unused('uses-a', [])).toEqual([]);
      expect(await db.withSubject('uses-a', 'looking up', async (trx) => (await lookUp(trx, 'uses-b', ['partner'], [])).unused)).toEqual(['partner']);
    } finally {
      // The next test compares every memory_terms row: leave none behind.
      for (const subject of ['uses-a', 'uses-b']) await db.withSubject(subject, 'cleaning up', (trx) => sql`delete from memories where subject = ${subject}`.execute(trx));
    }
  });

  /** As the tables' owner, as an operator would (the service's own role may not truncate or alter). */
  const asOwner = async (statement: string) => {
    if (engine === 'pglite') await (await sharedPGlite()).exec(statement);
    else {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(statement).finally(() => client.end());
    }
  };
  /** The memory's rows, their ranks against ts_rank over the memory, its lexeme count and its pending row. */
  const state = (subject: string, id: number | string) =>
    db.withSubject(subject, 'comparing ranks', async (trx) => {
      const { rows } = await sql<{ rows: number; mismatched: number; lexemes: number; written: number | null }>`
        select (select count(*)::int from memory_terms where memory_id = ${id}) as rows,
               (select count(*)::int from memory_terms join memories on memories.id = memory_terms.memory_id
                 where memory_terms.memory_id = ${id}
                   and memory_terms.rank <> ts_rank(memories.search_vector, ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery)) as mismatched,
               (select length(search_vector) from memories where id = ${id}) as lexemes,
               (select written from memory_terms_pending where memory_id = ${id}) as written`.execute(trx);
      return rows[0]!;
    });
  /** Inserts as remember does, writing only the first `atOnce` rows; returns the id. */
  const insertInSteps = (subject: string, text: string, atOnce: number) =>
    db.withSubject(subject, 'inserting', async (trx) => {
      const inserted = await insertMemoryNearTombstones(trx, subject, newMemory(text), { whole: storedVector([1, 0, 0], 'm'), passages: [] }, { minSimilarity: 0.9, limit: 5, termsAtOnce: atOnce });
      return inserted;
    });

  it('writes a memory’s lexemes, replaces them when its text changes, and removes them with the memory', async () => {
    const passport = await insert('alice', 'Alice keeps her passport in the blue drawer');
    const bicycle = await insert('bob', 'Bob keeps his bicycle in the garage');
    expect(await terms()).toEqual([
      `alice ${passport} alic`, `alice ${passport} blue`, `alice ${passport} drawer`, `alice ${passport} keep`, `alice ${passport} passport`,
      `bob ${bicycle} bicycl`, `bob ${bicycle} bob`, `bob ${bicycle} garag`, `bob ${bicycle} keep`,
    ]);

    await db.withSubject('alice', 'changing', (trx) => sql`update memories set text = 'Alice keeps her keys by the door' where id = ${passport}`.execute(trx));
    expect(await terms()).toEqual([
      `alice ${passport} alic`, `alice ${passport} door`, `alice ${passport} keep`, `alice ${passport} key`,
      `bob ${bicycle} bicycl`, `bob ${bicycle} bob`, `bob ${bicycle} garag`, `bob ${bicycle} keep`,
    ]);

    await db.withSubject('bob', 'deleting', (trx) => sql`delete from memories where id = ${bicycle}`.execute(trx));
    expect(await terms()).toEqual([`alice ${passport} alic`, `alice ${passport} door`, `alice ${passport} keep`, `alice ${passport} key`]);
  });

  it('empties memory_terms, its pending rows and the per-subject counts when memories is truncated (the foreign key used to refuse that)', async () => {
    await insert('carol', 'Carol grows tomatoes on the balcony');
    const pending = await insertInSteps('carol', longText(60, 9), 100);
    expect((await state('carol', pending.memoryId)).written).toBe(100);
    const counted = () => db.withAllSubjects('counting', async (trx) => (await sql<{ subject: string }>`select subject from subject_stats where memories > 0 order by subject`.execute(trx)).rows.map((row) => row.subject));
    expect((await terms()).length).toBeGreaterThan(0);
    expect(await counted()).toContain('carol');
    await asOwner(`truncate "${db.schema}".memories, "${db.schema}".memory_restatements`);
    expect(await terms()).toEqual([]);
    expect(await counted()).toEqual([]);
    expect(await db.withAllSubjects('reading', async (trx) => (await sql`select * from memory_terms_pending`.execute(trx)).rows)).toEqual([]);
  });

  it('writes a long text’s rows in steps, each transaction continuing where the last stopped, with ts_rank’s ranks', async () => {
    const { memoryId, termsPending } = await insertInSteps('erin', longText(80), 100);
    expect(termsPending).toBe(true);
    const first = await state('erin', memoryId);
    expect(first.lexemes).toBeGreaterThan(200);
    expect(first).toMatchObject({ rows: 100, written: 100, mismatched: 0 });
    let steps = 0;
    while (!(await db.withSubject('erin', 'continuing', (trx) => continueMemoryTerms(trx, 'erin', memoryId, 100)))) {
      steps += 1;
      expect(await state('erin', memoryId)).toMatchObject({ rows: 100 * (steps + 1), written: 100 * (steps + 1), mismatched: 0 });
    }
    expect(steps).toBe(Math.ceil(first.lexemes / 100) - 2);
    expect(await state('erin', memoryId)).toEqual({ rows: first.lexemes, mismatched: 0, lexemes: first.lexemes, written: null });
    // Nothing left: a further step is a no-op that says so.
    expect(await db.withSubject('erin', 'continuing', (trx) => continueMemoryTerms(trx, 'erin', memoryId, 100))).toBe(true);
    expect((await state('erin', memoryId)).rows).toBe(first.lexemes);

    const short = await insertInSteps('erin', 'Erin keeps bees behind the shed', 100);
    expect(short.termsPending).toBe(false);
    expect(await state('erin', short.memoryId)).toEqual({ rows: 5, mismatched: 0, lexemes: 5, written: null });
  });

  it('remember answers once every word of a long text is written; another subject never sees its pending row', async () => {
    const service = new MemoryService({ db, embedder: oneVector, nearDuplicateThreshold: 0.9 });
    const { memoryId, status } = await service.remember('frank', newMemory(longText(150, 1)), 'insert');
    expect(status).toBe('stored');
    const after = await state('frank', memoryId);
    expect(after.lexemes).toBeGreaterThan(400);
    expect(after).toEqual({ rows: after.lexemes, mismatched: 0, lexemes: after.lexemes, written: null });
    const recalled = await service.recall('frank', { query: `friend1y149`, limit: 1, maxChars: 100, filters: { tags: [], tagMatch: 'any', sessionId: undefined, captureMode: undefined, sourceProvider: undefined, createdAfter: undefined, createdBefore: undefined } });
    expect(recalled.memories.map((memory) => memory.id)).toEqual([memoryId]);

    const pending = await insertInSteps('frank', longText(60, 2), 100);
    const seen = await db.withSubject('grace', 'looking', async (trx) => (await sql`select * from memory_terms_pending`.execute(trx)).rows);
    expect(seen).toEqual([]);
    await service.completePendingTerms();
    expect((await state('frank', pending.memoryId)).written).toBeNull();
  });

  it('finishes what a crash left between steps when the service starts, and a forgotten memory’s pending row goes with it', async () => {
    const left = await insertInSteps('heidi', longText(60, 3), 100);
    const forgotten = await insertInSteps('ivan', longText(60, 4), 100);
    const service = new MemoryService({ db, embedder: oneVector, nearDuplicateThreshold: 0.9 });
    await service.forget('ivan', forgotten.memoryId, undefined);
    const pendingIds = () => db.withAllSubjects('reading', async (trx) => (await sql<{ memory_id: string }>`select memory_id from memory_terms_pending`.execute(trx)).rows.map((row) => Number(row.memory_id)));
    expect(await pendingIds()).toEqual([left.memoryId]);
    expect((await state('heidi', left.memoryId)).rows).toBe(100);

    await service.completePendingTerms();
    const done = await state('heidi', left.memoryId);
    expect(done).toEqual({ rows: done.lexemes, mismatched: 0, lexemes: done.lexemes, written: null });
    expect(await pendingIds()).toEqual([]);
  });

  it('a step that fails does not fail the remember: it answers stored, reports the error, and the retry writes the rest', async () => {
    const errors: unknown[] = [];
    const service = new MemoryService({ db, embedder: oneVector, nearDuplicateThreshold: 0.9, onTermsError: (error) => errors.push(error) });
    await asOwner(`alter function "${db.schema}".memory_terms_continue(text, bigint, integer) rename to memory_terms_continue_away`);
    let result;
    try {
      result = await service.remember('judy', newMemory(longText(150, 5)), 'insert');
    } finally {
      await asOwner(`alter function "${db.schema}".memory_terms_continue_away(text, bigint, integer) rename to memory_terms_continue`);
    }
    expect(result.status).toBe('stored');
    expect(errors.map((error) => (error as { code?: string }).code)).toEqual(['DATABASE_ERROR']);
    // The insert wrote the first step; the steps after it failed.
    const stuck = await state('judy', result.memoryId);
    expect(stuck.rows).toBeGreaterThan(0);
    expect(stuck.rows).toBeLessThan(stuck.lexemes);
    expect(stuck.written).toBe(stuck.rows);

    await service.completePendingTerms();
    service.close();
    const done = await state('judy', result.memoryId);
    expect(done).toEqual({ rows: done.lexemes, mismatched: 0, lexemes: done.lexemes, written: null });
  });

  it('writes the lexemes of a long text with the same ranks as ts_rank over the memory', async () => {
    const text = Array.from({ length: 400 }, (_, i) => `Fact ${i}: the user visited place${i % 97} with friend${i % 53} in month${i % 12}.`).join(' ');
    const id = await insert('dave', text);
    const mismatches = await db.withSubject('dave', 'comparing ranks', async (trx) => {
      const { rows } = await sql<{ lexemes: number; mismatched: number }>`
        select count(*)::int as lexemes,
               count(*) filter (where memory_terms.rank <> ts_rank(memories.search_vector, ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery))::int as mismatched
          from memory_terms join memories on memories.id = memory_terms.memory_id
         where memory_terms.memory_id = ${id}`.execute(trx);
      return rows[0]!;
    });
    expect(mismatches.lexemes).toBeGreaterThan(150);
    expect(mismatches.mismatched).toBe(0);
  });
});

describe.each(engines)('a server starting on %s', (engine) => {
  it('finishes the words a crash left unwritten between a remember’s steps', async () => {
    const first = await startTestServer({ engine, embedder: oneVector });
    const text = longText(60, 8);
    // What a kill leaves: the memory and its first step committed, the steps after it never run.
    await first.admin(`begin;
      select set_config('memory_service.subject', 'kim', true), set_config('memory_service.terms_at_once', '50', true);
      insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values ('kim', '${text}', '[1,0,0]', 'm', 3);
      commit;`);
    const progress = (server: typeof first) =>
      server.service.db.withAllSubjects('reading', async (trx) => {
        const { rows } = await sql<{ rows: number; lexemes: number; pending: number }>`
          select (select count(*)::int from memory_terms) as rows,
                 (select sum(length(search_vector))::int from memories) as lexemes,
                 (select count(*)::int from memory_terms_pending) as pending`.execute(trx);
        return rows[0]!;
      });
    const left = await progress(first);
    expect(left).toMatchObject({ rows: 50, pending: 1 });
    expect(left.lexemes).toBeGreaterThan(150);
    await first.close({ keepData: true });

    const second = await startTestServer({ engine, embedder: oneVector, schema: first.schema, dataDir: first.dataDir });
    try {
      expect(await progress(second)).toEqual({ rows: left.lexemes, lexemes: left.lexemes, pending: 0 });
      const token = await second.token('kim');
      const { structured } = await second.call(token, 'recall', { query: 'friend8y59', limit: 1 });
      expect((structured.memories as { text: string }[]).map((memory) => memory.text.slice(0, 20))).toEqual([text.slice(0, 20)]);
    } finally {
      await second.close();
    }
  });
});
