import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { TEST_DATABASE_URL, engines } from '../helpers/engines.js';
import { closeTestDatabase, openTestDatabase, sharedPGlite } from '../helpers/shared.js';

/**
 * memory_terms (the full-text ranking's inverted index) follows memories by trigger alone, with no foreign key
 * (migration 0011): inserting, changing, deleting and truncating memories must keep it exactly in step.
 */
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

  it('empties memory_terms and the per-subject counts when memories is truncated (the foreign key used to refuse that)', async () => {
    await insert('carol', 'Carol grows tomatoes on the balcony');
    const counted = () => db.withAllSubjects('counting', async (trx) => (await sql<{ subject: string }>`select subject from subject_stats where memories > 0 order by subject`.execute(trx)).rows.map((row) => row.subject));
    expect((await terms()).length).toBeGreaterThan(0);
    expect(await counted()).toContain('carol');
    // As the tables' owner, as an operator would (the service's own role may not truncate).
    const statement = `truncate "${db.schema}".memories`;
    if (engine === 'pglite') await (await sharedPGlite()).exec(statement);
    else {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(statement).finally(() => client.end());
    }
    expect(await terms()).toEqual([]);
    expect(await counted()).toEqual([]);
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
