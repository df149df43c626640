import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * The bytes of text each subject's memories and restatements hold, kept with their counts by the same triggers:
 * the per-subject quota (memories and bytes) is checked on every remember and import batch, and summing a large
 * subject's texts each time would cost as much as the write.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table subject_stats add column text_bytes bigint not null default 0 check (text_bytes >= 0)`.execute(db);
  await sql`
    create or replace function subject_stats_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update subject_stats
           set memories = memories - 1, in_conversations = in_conversations - (old.session_id is not null)::int,
               text_bytes = text_bytes - octet_length(old.text)
         where subject = old.subject;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into subject_stats (subject, memories, in_conversations, text_bytes)
          values (new.subject, 1, (new.session_id is not null)::int, octet_length(new.text))
          on conflict (subject) do update
          set memories = subject_stats.memories + 1, in_conversations = subject_stats.in_conversations + excluded.in_conversations,
              text_bytes = subject_stats.text_bytes + excluded.text_bytes;
      end if;
      return null;
    end $$`.execute(db);
  await sql`drop trigger memories_count_move on memories`.execute(db);
  await sql`
    create trigger memories_count_move after update of subject, session_id, text on memories
      for each row when (old.subject is distinct from new.subject or old.session_id is distinct from new.session_id
                         or old.text is distinct from new.text)
      execute function subject_stats_sync()`.execute(db);
  await sql`
    create or replace function subject_stats_restatements() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'DELETE' then
        update subject_stats set restatements = restatements - 1, text_bytes = text_bytes - octet_length(old.text)
         where subject = old.subject;
      else
        update subject_stats set restatements = restatements + 1, text_bytes = text_bytes + octet_length(new.text)
         where subject = new.subject;
      end if;
      return null;
    end $$`.execute(db);
  await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(db);
  await sql`
    update subject_stats set text_bytes = counted.text_bytes
      from (select subject, sum(octet_length(text)) as text_bytes
              from (select subject, text from memories union all select subject, text from memory_restatements) as texts
             group by subject) as counted
     where subject_stats.subject = counted.subject`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function subject_stats_restatements() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'DELETE' then
        update subject_stats set restatements = restatements - 1 where subject = old.subject;
      else
        update subject_stats set restatements = restatements + 1 where subject = new.subject;
      end if;
      return null;
    end $$`.execute(db);
  await sql`drop trigger memories_count_move on memories`.execute(db);
  await sql`
    create trigger memories_count_move after update of subject, session_id on memories
      for each row when (old.subject is distinct from new.subject or old.session_id is distinct from new.session_id)
      execute function subject_stats_sync()`.execute(db);
  await sql`
    create or replace function subject_stats_sync() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update subject_stats
           set memories = memories - 1, in_conversations = in_conversations - (old.session_id is not null)::int
         where subject = old.subject;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into subject_stats (subject, memories, in_conversations) values (new.subject, 1, (new.session_id is not null)::int)
          on conflict (subject) do update
          set memories = subject_stats.memories + 1, in_conversations = subject_stats.in_conversations + excluded.in_conversations;
      end if;
      return null;
    end $$`.execute(db);
  await sql`alter table subject_stats drop column text_bytes`.execute(db);
}
