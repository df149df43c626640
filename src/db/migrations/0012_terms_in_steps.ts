import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/** A lexeme as a one-word tsquery (as 0009 has it). */
const LEXEME_QUERY = `('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery`;

/**
 * A long memory's memory_terms rows can be written in steps, each its own short transaction.
 *
 * A 16,000-character text has ~1,000 lexemes; writing their rows took ~20–30 ms of its ~30–40 ms insert on
 * PGlite, whose one connection every other subject's recall waits for. When the inserting transaction sets
 * `memory_service.terms_at_once` to N, the trigger writes the memory's first N lexemes (tsvector_to_array's
 * order) and records how far it got in memory_terms_pending; `memory_terms_continue(subject, memory, N)` writes the next
 * N and returns true once none are left (and the pending row is gone). Without the setting (imports, corrections,
 * an operator's SQL) the trigger writes every row at once, as before.
 *
 * A memory with a pending row is found by its vector at once and by its words once its steps are done; a crash
 * between steps leaves the row, and the service finishes the steps when it starts. Continuing locks the pending
 * row, so two processes continuing one memory take turns and never write a lexeme twice.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table memory_terms_pending (
      subject    text not null,
      memory_id  bigint not null,
      written    integer not null,
      primary key (subject, memory_id)
    )`.execute(db);
  await sql`alter table memory_terms_pending enable row level security`.execute(db);
  await sql`alter table memory_terms_pending force row level security`.execute(db);
  await sql`
    create policy memory_terms_pending_subject_isolation on memory_terms_pending
      using (subject = current_setting('memory_service.subject', true)
             or current_setting('memory_service.all_subjects', true) = 'on')
      with check (subject = current_setting('memory_service.subject', true)
                  or current_setting('memory_service.all_subjects', true) = 'on')`.execute(db);
  await sql`
    create or replace function memory_terms_sync() returns trigger language plpgsql set search_path from current as $$
    declare
      terms tsvector := new.search_vector;
      lexemes text[] := tsvector_to_array(new.search_vector);
      at_once integer := nullif(current_setting('memory_service.terms_at_once', true), '')::integer;
    begin
      if tg_op = 'UPDATE' then
        delete from memory_terms where memory_id = old.id;
        delete from memory_terms_pending where subject = old.subject and memory_id = old.id;
      end if;
      if at_once is not null and cardinality(lexemes) > at_once then
        insert into memory_terms_pending (subject, memory_id, written) values (new.subject, new.id, at_once);
        lexemes := lexemes[1:at_once];
      end if;
      insert into memory_terms (subject, lexeme, memory_id, rank)
        select new.subject, lexeme, new.id, ts_rank(terms, ${sql.raw(LEXEME_QUERY)})
          from unnest(lexemes) as lexeme;
      return null;
    end $$`.execute(db);
  await sql`
    create function memory_terms_continue(owner text, target bigint, step integer) returns boolean
      language plpgsql set search_path from current as $$
    declare
      pending memory_terms_pending;
      terms tsvector;
      lexemes text[];
    begin
      select * into pending from memory_terms_pending where subject = owner and memory_id = target for update;
      if not found then
        return true;
      end if;
      select search_vector into terms from memories where subject = owner and id = target;
      lexemes := coalesce(tsvector_to_array(terms), '{}');
      insert into memory_terms (subject, lexeme, memory_id, rank)
        select owner, lexeme, target, ts_rank(terms, ${sql.raw(LEXEME_QUERY)})
          from unnest(lexemes[pending.written + 1 : pending.written + step]) as lexeme;
      if pending.written + step >= cardinality(lexemes) then
        delete from memory_terms_pending where subject = owner and memory_id = target;
        return true;
      end if;
      update memory_terms_pending set written = pending.written + step where subject = owner and memory_id = target;
      return false;
    end $$`.execute(db);
  await sql`
    create or replace function memory_terms_forget() returns trigger language plpgsql set search_path from current as $$
    begin
      delete from memory_terms where memory_id = old.id;
      delete from memory_terms_pending where subject = old.subject and memory_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function memories_truncated() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate memory_terms, memory_terms_pending, subject_stats;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Finish every pending memory's rows first: without the table, nothing would.
  await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(db);
  await sql`select memory_terms_continue(subject, memory_id, 1000000) from memory_terms_pending`.execute(db);
  await sql`
    create or replace function memories_truncated() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate memory_terms, subject_stats;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function memory_terms_forget() returns trigger language plpgsql set search_path from current as $$
    begin
      delete from memory_terms where memory_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`drop function memory_terms_continue(text, bigint, integer)`.execute(db);
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
  await sql`drop table memory_terms_pending`.execute(db);
}
