import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open-database.js';
import { introspectingOneSchema } from '../../src/db/own-schema-introspector.js';
import type { Database } from '../../src/db/schema.js';
import { NO_FILTERS as noFilters } from '../../src/db/memories/filters.js';
import { countStaleEmbeddings } from '../../src/db/memories/reembed.js';
import { subjectMemoryCount } from '../../src/db/memories/subject-stats.js';
import { textRanking } from '../../src/db/memories/text-ranking.js';
import { SpaceService, SUBJECTS_AS_NAMES } from '../../src/spaces/space-service.js';
import { TEST_DATABASE_URL, engines, uniqueSchema } from '../helpers/engines.js';
import { sharedPGlite } from '../helpers/shared.js';

/** `body` in a transaction that sees every subject's rows (memory_service.all_subjects, from migration 0006 on). */
function asAllSubjects<T>(db: Kysely<Database>, body: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(trx);
    return body(trx);
  });
}

/**
 * A database holding memories written before migrations 0004 (memory_terms) and 0005 (subject_stats) must keep
 * them searchable by text after the upgrade: the migrations index and count the existing rows, per subject. And a
 * memory split into passages before 0014 took the model's paragraph vector as its whole one: reembed must redo it.
 */
describe.each(engines)('upgrading a database with memories on %s', (engine) => {
  /** A fresh schema migrated as far as `until`, for `body`; dropped afterwards. */
  async function inSchemaMigratedTo(until: string, body: (db: Kysely<Database>, schema: string, pglite: PGlite | undefined) => Promise<void>): Promise<void> {
    const schema = uniqueSchema();
    const pglite = engine === 'pglite' ? await sharedPGlite() : undefined;
    if (pglite !== undefined) await pglite.exec(`create schema "${schema}"; set search_path to "${schema}", public`);
    const pool = engine === 'postgres' ? new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, options: `-c search_path=${schema},public` }) : undefined;
    // As the service does (open-database.ts): Kysely's own introspector reads every schema, and another test file
    // dropping its schema meanwhile failed the migration ("schema … does not exist").
    const db = new Kysely<Database>({ dialect: introspectingOneSchema(pool !== undefined ? new PostgresDialect({ pool }) : new PGliteDialect(pglite!), schema) });
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
      expect((await createMigrator(db, schema).migrateTo(until)).error).toBeUndefined();
      await body(db, schema, pglite);
    } finally {
      if (pool !== undefined) await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
      if (pool !== undefined) await db.destroy();
    }
  }

  it('indexes and counts the existing memories, so full-text recall still finds them', async () => {
    await inSchemaMigratedTo('0003_inline_vectors', async (db, schema, pglite) => {
      const inserted = await db.transaction().execute(async (trx) => {
        await sql`select set_config('memory_service.subject', '*', true)`.execute(trx);
        const { rows } = await sql<{ id: string; subject: string }>`
          insert into memories (subject, text, embedding, embedding_model, embedding_dimensions)
          values ('alice', 'Alice keeps her passport in the blue drawer', '[1,0,0]', 'm', 3),
                 ('bob', 'Bob keeps his bicycle in the garage', '[0,1,0]', 'm', 3)
          returning id, subject`.execute(trx);
        return Object.fromEntries(rows.map((row) => [row.subject, Number(row.id)]));
      });

      const after = await migrateToLatest(db, schema);
      expect(after.error).toBeUndefined();
      // From 0006 on, every subject is `memory_service.all_subjects = on`, no longer the subject '*'.
      const terms = await asAllSubjects(db, async (trx) => {
        return trx.selectFrom('memory_terms').select(['subject', 'lexeme', 'memory_id']).orderBy('subject').orderBy('lexeme').execute();
      });
      expect(terms.map((row) => [row.subject, row.lexeme, Number(row.memory_id)])).toEqual([
        ['alice', 'alic', inserted.alice],
        ['alice', 'blue', inserted.alice],
        ['alice', 'drawer', inserted.alice],
        ['alice', 'keep', inserted.alice],
        ['alice', 'passport', inserted.alice],
        ['bob', 'bicycl', inserted.bob],
        ['bob', 'bob', inserted.bob],
        ['bob', 'garag', inserted.bob],
        ['bob', 'keep', inserted.bob],
      ]);

      const counts = await asAllSubjects(db, async (trx) => {
        return trx.selectFrom('subject_stats').select(['subject', 'memories']).orderBy('subject').execute();
      });
      expect(counts.map((row) => [row.subject, Number(row.memories)])).toEqual([['alice', 1], ['bob', 1]]);

      const handle = await openDatabase({ url: engine === 'postgres' ? TEST_DATABASE_URL : undefined, dataDir: 'memory://', schema, embeddingDimensions: 3, pglite });
      try {
        const found = await handle.withSubject('alice', 'inspecting rows', async (trx) => textRanking(trx, 'alice', noFilters, 'where does she keep the passport?', 10, await subjectMemoryCount(trx, 'alice')));
        expect(found.map((hit) => hit.id)).toEqual([inserted.alice]);
        const foreign = await handle.withSubject('alice', 'inspecting rows', async (trx) => textRanking(trx, 'alice', noFilters, 'bicycle garage', 10, await subjectMemoryCount(trx, 'alice')));
        expect(foreign).toEqual([]);
      } finally {
        await handle.close();
      }
    });
  });

  it('marks the memories split into passages before 0014 as not split, so that reembed makes their whole vector anew', async () => {
    await inSchemaMigratedTo('0013_passage_vectors', async (db, schema) => {
      await asAllSubjects(db, async (trx) => {
        await sql`
          insert into memories (subject, text, embedding, embedding_model, embedding_dimensions, passage_embeddings)
          values ('alice', 'One sentence.', '[1,0,0]', 'm', 3, '{}'),
                 ('alice', 'Two sentences. Split before.', '[0,1,0]', 'm', 3, array['[0,1,0]', '[0,0,1]']::vector[]),
                 ('bob', 'Never split. Written before 0013.', '[0,0,1]', 'm', 3, null)`.execute(trx);
      });
      expect((await migrateToLatest(db, schema)).error).toBeUndefined();
      const rows = await asAllSubjects(db, async (trx) => {
        return (await sql<{ text: string; passages: number | null }>`select text, cardinality(passage_embeddings) as passages from memories order by id`.execute(trx)).rows;
      });
      expect(rows.map((row) => [row.text, row.passages === null ? null : Number(row.passages)])).toEqual([
        ['One sentence.', 0],
        ['Two sentences. Split before.', null],
        ['Never split. Written before 0013.', null],
      ]);
      const stale = await asAllSubjects(db, async (trx) => {
        return countStaleEmbeddings(trx, 'memories', 'm');
      });
      expect(stale).toBe(2);
    });
  });

  it('marks the tombstones written before 0015 as made from the paragraph, so that reembed makes their vector anew', async () => {
    await inSchemaMigratedTo('0014_whole_from_passages', async (db, schema) => {
      await asAllSubjects(db, async (trx) => {
        await sql`
          insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
          values (1, 'alice', 'Forgotten. Two sentences.', '[1,0,0]', 'm', 3, 'forgotten', now())`.execute(trx);
      });
      expect((await migrateToLatest(db, schema)).error).toBeUndefined();
      const stale = await asAllSubjects(db, async (trx) => {
        return countStaleEmbeddings(trx, 'tombstones', 'm');
      });
      expect(stale).toBe(1);
    });
  });

  it('counts the memories already in conversations, so that recall still looks up what was said next for them', async () => {
    await inSchemaMigratedTo('0015_tombstone_whole_from_passages', async (db, schema) => {
      await asAllSubjects(db, async (trx) => {
        await sql`
          insert into memories (subject, text, embedding, embedding_model, embedding_dimensions, session_id)
          values ('alice', 'Alice: What did you paint?', '[1,0,0]', 'm', 3, 'chat-1'),
                 ('alice', 'Bob: A lake at sunrise.', '[0,1,0]', 'm', 3, 'chat-1'),
                 ('alice', 'Alice keeps her passport in the blue drawer', '[0,0,1]', 'm', 3, null),
                 ('bob', 'Bob keeps his bicycle in the garage', '[0,1,0]', 'm', 3, null)`.execute(trx);
      });
      expect((await migrateToLatest(db, schema)).error).toBeUndefined();
      const counts = await asAllSubjects(db, async (trx) => {
        return trx.selectFrom('subject_stats').select(['subject', 'memories', 'in_conversations']).orderBy('subject').execute();
      });
      expect(counts.map((row) => [row.subject, Number(row.memories), Number(row.in_conversations)])).toEqual([
        ['alice', 3, 2],
        ['bob', 1, 0],
      ]);
    });
  });
  it('keeps every memory and tombstone as they were, and adds memory_restatements under the subjects\' row-level security', async () => {
    await inSchemaMigratedTo('0016_conversation_count', async (db, schema, pglite) => {
      const dump = (trx: Transaction<Database>) =>
        sql`select (select json_agg(m order by id)::text from (select id, subject, text, tags, embedding::text, last_confirmed_at, created_at from memories) as m) as memories,
                   (select json_agg(t order by id)::text from (select id, memory_id, subject, text, reason, tombstoned_at from tombstones) as t) as tombstones`.execute(trx);
      const before = await asAllSubjects(db, async (trx) => {
        await sql`
          insert into memories (subject, text, embedding, embedding_model, embedding_dimensions)
          values ('alice', 'Alice keeps her passport in the blue drawer', '[1,0,0]', 'm', 3),
                 ('bob', 'Bob keeps his bicycle in the garage', '[0,1,0]', 'm', 3)`.execute(trx);
        await sql`
          insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
          values (999, 'alice', 'Alice kept her passport in the red drawer', '[1,0,0]', 'm', 3, 'forgotten', now())`.execute(trx);
        return (await dump(trx)).rows;
      });
      expect((await migrateToLatest(db, schema)).error).toBeUndefined();
      expect(await asAllSubjects(db, async (trx) => (await dump(trx)).rows)).toEqual(before);
      const tombstoneRestatements = await asAllSubjects(db, async (trx) => (await sql<{ restatements: unknown }>`select restatements from tombstones`.execute(trx)).rows);
      expect(tombstoneRestatements).toEqual([{ restatements: [] }]);

      const aliceMemory = await asAllSubjects(db, async (trx) => Number((await sql<{ id: string }>`select id from memories where subject = 'alice'`.execute(trx)).rows[0]!.id));
      // PGlite's one user is a superuser, whom row-level security never binds: the checks run as a plain role there.
      if (pglite !== undefined) {
        await sql`do $$ begin create role restatement_reader nologin; exception when duplicate_object then null; end $$`.execute(db);
        await sql.raw(`grant usage on schema "${schema}" to restatement_reader`).execute(db);
        await sql`grant select, insert on memory_restatements to restatement_reader`.execute(db);
        // The restatement count's trigger runs as the writer, as it does for the service's role.
        await sql`grant select, update on subject_stats to restatement_reader`.execute(db);
        // Row-level security reads memberships (migration 0020) as the reader too.
        await sql`grant select on spaces, space_members to restatement_reader`.execute(db);
      }
      const asSubject = <T>(subject: string, body: (trx: Transaction<Database>) => Promise<T>) =>
        db.transaction().execute(async (trx) => {
          await sql`select set_config('memory_service.subject', ${subject}, true)`.execute(trx);
          if (pglite !== undefined) await sql`set local role restatement_reader`.execute(trx);
          return body(trx);
        });
      await asSubject('alice', (trx) =>
        sql`insert into memory_restatements (memory_id, subject, text, embedding, embedding_model, embedding_dimensions)
            values (${aliceMemory}, 'alice', 'Alice''s passport is in the blue drawer', '[1,0,0]', 'm', 3)`.execute(trx),
      );
      const visible = (subject: string) => asSubject(subject, async (trx) => (await sql<{ text: string }>`select text from memory_restatements`.execute(trx)).rows.map((row) => row.text));
      expect(await visible('alice')).toEqual(["Alice's passport is in the blue drawer"]);
      expect(await visible('bob')).toEqual([]);
      // Nor may one subject write a row of another's.
      await expect(
        asSubject('bob', (trx) =>
          sql`insert into memory_restatements (memory_id, subject, text, embedding, embedding_model, embedding_dimensions)
              values (${aliceMemory}, 'alice', 'planted', '[1,0,0]', 'm', 3)`.execute(trx),
        ),
      ).rejects.toThrow(/row-level security/);
    });
  });

  it('keeps every row of 0019 as it was, in its owner\'s personal space and visible to them alone, and shares on it', async () => {
    await inSchemaMigratedTo('0019_brief', async (db, schema, pglite) => {
      const tables = ['memories', 'tombstones', 'memory_restatements', 'memory_recalls', 'subject_stats', 'memory_terms'] as const;
      // Every column of every row that 0019 had (memories.author comes with 0020 and is left out).
      const dump = (trx: Transaction<Database>) =>
        sql<Record<(typeof tables)[number], string>>`
          select (select json_agg(m order by id)::text from (select id, subject, text, tags, importance, session_id, embedding::text, passage_embeddings::text,
                                                                last_confirmed_at, created_at, updated_at from memories) as m) as memories,
                 (select json_agg(t order by id)::text from (select * from tombstones) as t) as tombstones,
                 (select json_agg(r order by id)::text from (select id, memory_id, subject, text, tags, embedding::text, created_at from memory_restatements) as r) as memory_restatements,
                 (select json_agg(c order by memory_id)::text from (select * from memory_recalls) as c) as memory_recalls,
                 (select json_agg(s order by subject)::text from (select * from subject_stats) as s) as subject_stats,
                 (select json_agg(w order by subject, lexeme, memory_id)::text from (select * from memory_terms) as w) as memory_terms`.execute(trx);
      const before = await asAllSubjects(db, async (trx) => {
        const { rows } = await sql<{ id: string; subject: string }>`
          insert into memories (subject, text, tags, embedding, embedding_model, embedding_dimensions, session_id)
          values ('alice', 'Alice keeps her passport in the blue drawer', '{home}', '[1,0,0]', 'm', 3, null),
                 ('alice', 'Alice: What did you paint?', '{}', '[0,1,0]', 'm', 3, 'chat-1'),
                 ('bob', 'Bob keeps his bicycle in the garage', '{}', '[0,0,1]', 'm', 3, null)
          returning id, subject`.execute(trx);
        const [alicePassport, , bobBicycle] = rows.map((row) => Number(row.id));
        await sql`
          insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
          values (900001, 'alice', 'Alice kept her passport in the red drawer', '[1,0,0]', 'm', 3, 'corrected', now()),
                 (900002, 'bob', 'Bob had a scooter', '[0,0,1]', 'm', 3, 'forgotten', now())`.execute(trx);
        await sql`
          insert into memory_restatements (memory_id, subject, text, embedding, embedding_model, embedding_dimensions)
          values (${alicePassport}, 'alice', 'Alice''s passport is in the blue drawer', '[1,0,0]', 'm', 3),
                 (${bobBicycle}, 'bob', 'The bicycle is kept in the garage', '[0,0,1]', 'm', 3)`.execute(trx);
        await sql`insert into memory_recalls (memory_id, subject, recalls) values (${alicePassport}, 'alice', 4), (${bobBicycle}, 'bob', 2)`.execute(trx);
        return (await dump(trx)).rows[0]!;
      });
      for (const table of tables) expect(JSON.parse(before[table]), table).not.toBeNull();

      expect((await migrateToLatest(db, schema)).error).toBeUndefined();
      expect(await asAllSubjects(db, async (trx) => (await dump(trx)).rows[0])).toEqual(before);

      const handle = await openDatabase({ url: engine === 'postgres' ? TEST_DATABASE_URL : undefined, dataDir: 'memory://', schema, embeddingDimensions: 3, pglite });
      try {
        const seen = (subject: string) =>
          handle.withSubject(subject, 'inspecting rows', async (trx) => {
            const counts: Record<string, string[]> = {};
            for (const table of tables) {
              const { rows } = await sql<{ subject: string }>`select subject from ${sql.table(table)}`.execute(trx);
              counts[table] = [...new Set(rows.map((row) => row.subject))];
            }
            return counts;
          });
        for (const subject of ['alice', 'bob']) {
          expect(await seen(subject)).toEqual(Object.fromEntries(tables.map((table) => [table, [subject]])));
        }
        expect(await seen('carol')).toEqual(Object.fromEntries(tables.map((table) => [table, []])));

        // Sharing works on the upgraded data: alice makes a space, shares it with bob as a writer; he writes there
        // and she sees it, while neither sees the other's personal rows.
        const spaces = new SpaceService(handle, SUBJECTS_AS_NAMES);
        const household = await spaces.create('alice', 'Household');
        await spaces.share('alice', household.id, 'bob', 'writer');
        expect((await spaces.list('bob')).map((space) => [space.name, space.role])).toEqual([['Personal', 'owner'], ['Household', 'writer']]);
        await handle.withSubject('bob', 'writing', (trx) =>
          sql`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values (${household.key}, 'The boiler is serviced in October', '[1,0,0]', 'm', 3)`.execute(trx),
        );
        const texts = (subject: string) =>
          handle.withSubject(subject, 'inspecting rows', async (trx) => (await sql<{ text: string }>`select text from memories order by id`.execute(trx)).rows.map((row) => row.text));
        expect(await texts('alice')).toEqual(['Alice keeps her passport in the blue drawer', 'Alice: What did you paint?', 'The boiler is serviced in October']);
        expect(await texts('bob')).toEqual(['Bob keeps his bicycle in the garage', 'The boiler is serviced in October']);
        expect(await texts('carol')).toEqual([]);
        expect(await asAllSubjects(db, async (trx) => (await dump(trx)).rows[0]!.tombstones)).toEqual(before.tombstones);
      } finally {
        await handle.close();
      }
    });
  });
});
