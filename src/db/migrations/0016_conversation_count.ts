import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * How many of each subject's memories belong to a conversation (have a session_id), kept with the count of its
 * memories by the same trigger. Every hybrid recall looks up what was said next after its best result; a subject
 * none of whose memories has a session_id has nothing to look up, and the statement that reads the subject's size
 * now says so, which spares that round trip.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table subject_stats add column in_conversations bigint not null default 0 check (in_conversations >= 0)`.execute(db);
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
  await sql`drop trigger memories_count_move on memories`.execute(db);
  await sql`
    create trigger memories_count_move after update of subject, session_id on memories
      for each row when (old.subject is distinct from new.subject or old.session_id is distinct from new.session_id)
      execute function subject_stats_sync()`.execute(db);
  await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(db);
  await sql`
    update subject_stats set in_conversations = counted.memories
      from (select subject, count(*) as memories from memories where session_id is not null group by subject) as counted
     where subject_stats.subject = counted.subject`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger memories_count_move on memories`.execute(db);
  await sql`
    create trigger memories_count_move after update of subject on memories
      for each row when (old.subject is distinct from new.subject) execute function subject_stats_sync()`.execute(db);
  await sql`
    create or replace function subject_stats_sync() returns trigger language plpgsql set search_path from current as $$
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
  await sql`alter table subject_stats drop column in_conversations`.execute(db);
}
