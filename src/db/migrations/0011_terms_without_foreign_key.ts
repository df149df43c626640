import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/** A lexeme as a one-word tsquery (as 0009 has it). */
const LEXEME_QUERY = `('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery`;

/**
 * memory_terms rows follow their memory by trigger alone, without the foreign key to memories.
 *
 * The key checked every inserted row against memories: one referential-integrity lookup per lexeme, ~700 for a
 * 16,000-character text, which was 44 % of that insert on PGlite (26.0 → 14.5 ms at p50, in-process probe). On
 * PGlite the insert holds the one connection every other subject's recall waits for. The rows are written only
 * by the trigger on memories, so what the key guarded is now kept the same way: a deleted memory's rows go with
 * it (the cascade did that), and TRUNCATE of memories empties memory_terms (the key refused that TRUNCATE), and
 * subject_stats too, whose counts TRUNCATE (firing no delete trigger) would otherwise leave behind.
 *
 * The sync function also reads the new search vector into a variable once, rather than for each lexeme.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table memory_terms drop constraint memory_terms_memory_id_fkey`.execute(db);
  await sql`
    create or replace function memory_terms_sync() returns trigger language plpgsql set search_path from current as $$
    declare
      terms tsvector := new.search_vector;
    begin
      if tg_op = 'UPDATE' then
        delete from memory_terms where memory_id = old.id;
      end if;
      insert into memory_terms (subject, lexeme, memory_id, rank)
        select new.subject, lexeme, new.id, ts_rank(terms, ${sql.raw(LEXEME_QUERY)})
          from unnest(tsvector_to_array(terms)) as lexeme;
      return null;
    end $$`.execute(db);
  await sql`
    create function memory_terms_forget() returns trigger language plpgsql set search_path from current as $$
    begin
      delete from memory_terms where memory_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`create trigger memories_terms_forget after delete on memories for each row execute function memory_terms_forget()`.execute(db);
  await sql`
    create function memories_truncated() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate memory_terms, subject_stats;
      return null;
    end $$`.execute(db);
  await sql`create trigger memories_terms_truncate after truncate on memories for each statement execute function memories_truncated()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger memories_terms_truncate on memories`.execute(db);
  await sql`drop function memories_truncated()`.execute(db);
  await sql`drop trigger memories_terms_forget on memories`.execute(db);
  await sql`drop function memory_terms_forget()`.execute(db);
  await sql`
    create or replace function memory_terms_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'UPDATE' then
        delete from memory_terms where memory_id = old.id;
      end if;
      insert into memory_terms (subject, lexeme, memory_id, rank)
        select new.subject, lexeme, new.id, ts_rank(new.search_vector, ${sql.raw(LEXEME_QUERY)})
          from unnest(tsvector_to_array(new.search_vector)) as lexeme;
      return null;
    end $$`.execute(db);
  await sql`alter table memory_terms add constraint memory_terms_memory_id_fkey foreign key (memory_id) references memories (id) on delete cascade`.execute(db);
}
