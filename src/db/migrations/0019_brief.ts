import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * What the brief at the start of a conversation reads: each subject's most recently confirmed memories and its
 * most important ones, through an index each (without them, every brief would sort the subject's whole heap,
 * vectors included), and how often each memory was recalled (memory_recalls: one small row per recalled memory,
 * so counting a recall never rewrites a memory's row with its vectors). The rows follow their memory by trigger
 * (no foreign key: it would refuse the TRUNCATE of memories that memories_truncated() handles).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index memories_subject_confirmed_idx on memories (subject, last_confirmed_at desc, id desc)`.execute(db);
  await sql`create index memories_subject_importance_idx on memories (subject, importance desc, last_confirmed_at desc, id desc)`.execute(db);
  await sql`
    create table memory_recalls (
      memory_id        bigint primary key,
      subject          text not null,
      recalls          integer not null default 0 check (recalls >= 0),
      last_recalled_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index memory_recalls_subject_recalls_idx on memory_recalls (subject, recalls desc, memory_id desc)`.execute(db);
  await sql`alter table memory_recalls enable row level security`.execute(db);
  await sql`alter table memory_recalls force row level security`.execute(db);
  await sql`
    create policy memory_recalls_subject_isolation on memory_recalls
      using (subject = current_setting('memory_service.subject', true)
             or current_setting('memory_service.all_subjects', true) = 'on')
      with check (subject = current_setting('memory_service.subject', true)
                  or current_setting('memory_service.all_subjects', true) = 'on')`.execute(db);
  await sql`
    create function memory_recalls_forget() returns trigger language plpgsql set search_path from current as $$
    begin
      delete from memory_recalls where memory_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`create trigger memories_recalls_forget after delete on memories for each row execute function memory_recalls_forget()`.execute(db);
  await sql`
    create or replace function memories_truncated() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate memory_terms, memory_terms_pending, subject_stats, memory_recalls;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function memories_truncated() returns trigger language plpgsql set search_path from current as $$
    begin
      truncate memory_terms, memory_terms_pending, subject_stats;
      return null;
    end $$`.execute(db);
  await sql`drop trigger memories_recalls_forget on memories`.execute(db);
  await sql`drop function memory_recalls_forget()`.execute(db);
  await sql`drop table memory_recalls`.execute(db);
  await sql`drop index memories_subject_importance_idx`.execute(db);
  await sql`drop index memories_subject_confirmed_idx`.execute(db);
}
