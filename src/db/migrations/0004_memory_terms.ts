import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * An inverted index of the memories' lexemes that PostgreSQL can use under row-level security. With RLS on
 * `memories`, the planner will not use the GIN index on search_vector for `@@` (the operator is not leakproof),
 * so full-text ranking read every row of the subject: 0.35 s for a subject with 100k memories. Text equality
 * is leakproof, so a B-tree on (subject, lexeme) serves the text ranking: each query word's memories, and how
 * many there are (its idf), through one index. Kept by a trigger, so no write path can forget it; rows go with
 * their memory (on delete cascade).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table memory_terms (
      subject    text not null,
      lexeme     text not null,
      memory_id  bigint not null references memories (id) on delete cascade,
      primary key (subject, lexeme, memory_id)
    )`.execute(db);
  await sql`create index memory_terms_memory_idx on memory_terms (memory_id)`.execute(db);
  await sql`alter table memory_terms enable row level security`.execute(db);
  await sql`alter table memory_terms force row level security`.execute(db);
  await sql`
    create policy memory_terms_subject_isolation on memory_terms
      using (subject = current_setting('memory_service.subject', true)
             or current_setting('memory_service.subject', true) = '*')
      with check (subject = current_setting('memory_service.subject', true)
                  or current_setting('memory_service.subject', true) = '*')`.execute(db);
  // AFTER, because a stored generated column (search_vector) is computed only after BEFORE triggers.
  await sql`
    create function memory_terms_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'UPDATE' then
        delete from memory_terms where memory_id = old.id;
      end if;
      insert into memory_terms (subject, lexeme, memory_id)
        select new.subject, lexeme, new.id from unnest(tsvector_to_array(new.search_vector)) as lexeme;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger memories_terms_sync after insert or update of text, subject on memories
      for each row execute function memory_terms_sync()`.execute(db);
  // The owner is subject to row-level security too (forced): '*' admits every subject for the backfill.
  await sql`select set_config('memory_service.subject', '*', true)`.execute(db);
  await sql`
    insert into memory_terms (subject, lexeme, memory_id)
      select memories.subject, lexeme, memories.id
        from memories cross join unnest(tsvector_to_array(memories.search_vector)) as lexeme`.execute(db);
  // Never usable under row-level security (above), so it only cost every insert.
  await sql`drop index memories_search_vector_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index memories_search_vector_idx on memories using gin (search_vector)`.execute(db);
  await sql`drop trigger memories_terms_sync on memories`.execute(db);
  await sql`drop function memory_terms_sync()`.execute(db);
  await sql`drop table memory_terms`.execute(db);
}
