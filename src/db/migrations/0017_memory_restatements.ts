import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * Restatements: a text that remember (dedup_policy skip_if_near) judged to state a stored memory is kept verbatim
 * as a row of its own linked to that memory, instead of being dropped. A mistaken "same fact" then loses nothing.
 *
 * Under the same row-level security as memories (the subject setting, or all_subjects for operators' tools). The
 * rows go with their memory (on delete cascade): correct and forget copy them into the tombstone first
 * (`tombstones.restatements`, a jsonb array of the rows' fields but their vectors, readable with jsonb_to_recordset).
 *
 * Searched by recall through their own columns, not memory_terms: a restatement's words must leave with it when it
 * is made a memory of its own, which memory_terms (one row per memory and lexeme, ranked on the memory's text)
 * cannot tell apart. A subject has few restatements (one per text judged a repeat), so its rows are read through
 * the (subject, memory_id) index and matched with `@@` on the stored search_vector. The per-dimension HNSW index
 * over `embedding`, like memories', is made at start with memories' (ensureVectorIndex).
 *
 * subject_stats counts each subject's restatements (kept by triggers, as the memories' count), so that recall
 * spends no round trip on restatements for a subject that has none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table memory_restatements (
      id                   bigint generated always as identity primary key,
      memory_id            bigint not null references memories (id) on delete cascade,
      subject              text not null,
      text                 text not null,
      tags                 text[] not null default '{}',
      source_provider      text,
      capture_mode         text check (capture_mode in ('explicit', 'inferred')),
      session_id           text,
      embedding            vector not null,
      embedding_model      text not null,
      embedding_dimensions integer not null,
      search_vector        tsvector generated always as (to_tsvector('english', text)) stored,
      created_at           timestamptz not null default now(),
      constraint memory_restatements_embedding_dimensions_match check (vector_dims(embedding) = embedding_dimensions)
    )`.execute(db);
  // Vectors inline, as memories' (0003): read by every recall of a subject with restatements.
  await sql`alter table memory_restatements alter column embedding set storage main`.execute(db);
  await sql`create index memory_restatements_subject_memory_idx on memory_restatements (subject, memory_id, created_at)`.execute(db);
  // The foreign key's cascade looks rows up by memory_id alone.
  await sql`create index memory_restatements_memory_idx on memory_restatements (memory_id)`.execute(db);
  await sql`alter table memory_restatements enable row level security`.execute(db);
  await sql`alter table memory_restatements force row level security`.execute(db);
  await sql`
    create policy memory_restatements_subject_isolation on memory_restatements
      using (subject = current_setting('memory_service.subject', true)
             or current_setting('memory_service.all_subjects', true) = 'on')
      with check (subject = current_setting('memory_service.subject', true)
                  or current_setting('memory_service.all_subjects', true) = 'on')`.execute(db);
  await sql`alter table tombstones add column restatements jsonb not null default '[]'`.execute(db);
  await sql`alter table subject_stats add column restatements bigint not null default 0 check (restatements >= 0)`.execute(db);
  // A restatement's memory exists, so its subject has a subject_stats row (but while erasing it: then none is updated).
  await sql`
    create function subject_stats_restatements() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'DELETE' then
        update subject_stats set restatements = restatements - 1 where subject = old.subject;
      else
        update subject_stats set restatements = restatements + 1 where subject = new.subject;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger memory_restatements_count after insert or delete on memory_restatements
      for each row execute function subject_stats_restatements()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table subject_stats drop column restatements`.execute(db);
  await sql`alter table tombstones drop column restatements`.execute(db);
  await sql`drop table memory_restatements`.execute(db);
  await sql`drop function subject_stats_restatements()`.execute(db);
}
