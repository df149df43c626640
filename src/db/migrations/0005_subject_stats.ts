import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * How many memories each subject has, kept by triggers. Recall needs it on every call (the full-text idf's
 * document count, and whether a subject is too large to rank exactly), and counting a large subject's rows
 * cost more than the rest of the text ranking (6 ms to count 10,000 of 100k rows). Per-subject writes are
 * already serialized, so the one counter row per subject adds no contention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table subject_stats (
      subject   text primary key,
      memories  bigint not null check (memories >= 0)
    )`.execute(db);
  await sql`alter table subject_stats enable row level security`.execute(db);
  await sql`alter table subject_stats force row level security`.execute(db);
  await sql`
    create policy subject_stats_subject_isolation on subject_stats
      using (subject = current_setting('memory_service.subject', true)
             or current_setting('memory_service.subject', true) = '*')
      with check (subject = current_setting('memory_service.subject', true)
                  or current_setting('memory_service.subject', true) = '*')`.execute(db);
  await sql`
    create function subject_stats_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update subject_stats set memories = memories - 1 where subject = old.subject;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into subject_stats (subject, memories) values (new.subject, 1)
          on conflict (subject) do update set memories = subject_stats.memories + 1;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger memories_count_insert after insert on memories for each row execute function subject_stats_sync()`.execute(db);
  await sql`create trigger memories_count_delete after delete on memories for each row execute function subject_stats_sync()`.execute(db);
  await sql`
    create trigger memories_count_move after update of subject on memories
      for each row when (old.subject is distinct from new.subject) execute function subject_stats_sync()`.execute(db);
  // The owner is subject to row-level security too (forced): '*' admits every subject for the backfill.
  await sql`select set_config('memory_service.subject', '*', true)`.execute(db);
  await sql`insert into subject_stats (subject, memories) select subject, count(*) from memories group by subject`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['memories_count_insert', 'memories_count_delete', 'memories_count_move']) {
    await sql`drop trigger ${sql.id(trigger)} on memories`.execute(db);
  }
  await sql`drop function subject_stats_sync()`.execute(db);
  await sql`drop table subject_stats`.execute(db);
}
