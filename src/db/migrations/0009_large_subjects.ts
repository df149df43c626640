import { sql, type Kysely, type RawBuilder } from 'kysely';

// Frozen in time: never import application code here.

/** A lexeme as a one-word tsquery: quoted into tsquery's input syntax, so punctuation cannot read as operators. */
const LEXEME_QUERY = `('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery`;

/**
 * Two aids for subjects with very many memories.
 *
 * Each memory_terms row carries its lexeme's ts_rank in the memory (a function of how often the word occurs),
 * and the primary key's index carries that rank too. The full-text ranking then scores every candidate from the
 * index alone and reads a memory's row only to check the filters of the few it keeps: before, it fetched every
 * candidate's row for ts_rank (718 random heap reads, ~10 ms of 12, for one question to a subject of 100k).
 * The value is ts_rank's own, computed by the trigger, so the scores are the same numbers as before.
 *
 * An index on (subject, md5(text)) finds a memory by its exact text. remember's near-duplicate check walks the
 * HNSW index for a large subject, and a graph can leave a node unreachable (measured: a stored row that no
 * ef_search up to 1000 found again); the same text sent again is then still recognised. md5 and text equality
 * are leakproof, so PostgreSQL uses the index under row-level security.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table memory_terms add column rank real`.execute(db);
  await replaceSyncFunction(db, sql`insert into memory_terms (subject, lexeme, memory_id, rank)
        select new.subject, lexeme, new.id, ts_rank(new.search_vector, ${sql.raw(LEXEME_QUERY)})
          from unnest(tsvector_to_array(new.search_vector)) as lexeme;`);
  // The owner is subject to row-level security too (forced): all_subjects admits every subject for the backfill.
  await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(db);
  await sql`
    update memory_terms set rank = ts_rank(memories.search_vector, ${sql.raw(LEXEME_QUERY)})
      from memories where memories.id = memory_terms.memory_id`.execute(db);
  await sql`alter table memory_terms alter column rank set not null`.execute(db);
  await sql`alter table memory_terms drop constraint memory_terms_pkey`.execute(db);
  await sql`alter table memory_terms add constraint memory_terms_pkey primary key (subject, lexeme, memory_id) include (rank)`.execute(db);
  await sql`create index memories_subject_text_md5_idx on memories (subject, md5(text))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index memories_subject_text_md5_idx`.execute(db);
  await sql`alter table memory_terms drop constraint memory_terms_pkey`.execute(db);
  await sql`alter table memory_terms add constraint memory_terms_pkey primary key (subject, lexeme, memory_id)`.execute(db);
  await replaceSyncFunction(db, sql`insert into memory_terms (subject, lexeme, memory_id)
        select new.subject, lexeme, new.id from unnest(tsvector_to_array(new.search_vector)) as lexeme;`);
  await sql`alter table memory_terms drop column rank`.execute(db);
}

/** memory_terms' trigger function (migration 0004's), with `insert` filling the new memory's rows. */
async function replaceSyncFunction(db: Kysely<any>, insert: RawBuilder<unknown>): Promise<void> {
  await sql`
    create or replace function memory_terms_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'UPDATE' then
        delete from memory_terms where memory_id = old.id;
      end if;
      ${insert}
      return null;
    end $$`.execute(db);
}
