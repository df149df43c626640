import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * Spaces. Every memory lives in a space, named by the key in its `subject` column (and in every table keyed by
 * it): a subject's personal space has the subject itself as its key, so every memory stored before spaces is in
 * its owner's personal space unchanged; a space made to be shared has a key of the form `space:<id>`, which no
 * subject may have (auth/subject.ts refuses it).
 *
 * Row-level security admits a row by membership, read from `spaces` and `space_members` in every statement:
 * removing a member ends their access with the next statement, whatever token they hold. The principal is the
 * transaction's `memory_service.subject`; `memory_service.space_limit` (a JSON array of space keys; empty for
 * no limit) narrows it to the spaces a token was limited to; `memory_service.groups` (a JSON array) carries the
 * values of the claim an external authorization server grants membership with (spaces.external_group).
 *
 * memory_service_space_roles() reads the membership tables with `memory_service.reading_memberships` on, which
 * only those two tables' policies honour, so that their policies, which call it, do not recurse; it turns the
 * setting off before it returns. Policies call it in a scalar subquery cast to an array: an InitPlan, evaluated
 * once per statement, not once per row, and only after the all_subjects test before it has failed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table spaces (
      id              text primary key check (id ~ '^space:[a-z0-9]{16,40}$'),
      name            text not null check (char_length(name) between 1 and 80),
      owner           text not null,
      external_group  text,
      external_role   text check (external_role in ('reader', 'writer')),
      created_at      timestamptz not null default now(),
      constraint spaces_external_pair check ((external_group is null) = (external_role is null))
    )`.execute(db);
  await sql`create unique index spaces_owner_name_idx on spaces (owner, lower(name))`.execute(db);
  await sql`create index spaces_external_group_idx on spaces (external_group) where external_group is not null`.execute(db);
  await sql`
    create table space_members (
      space_id   text not null references spaces (id) on delete cascade,
      member     text not null,
      role       text not null check (role in ('reader', 'writer')),
      added_at   timestamptz not null default now(),
      primary key (space_id, member)
    )`.execute(db);
  await sql`create index space_members_member_idx on space_members (member)`.execute(db);
  await sql`alter table memories add column author text`.execute(db);

  // The principal's spaces with their role: personal (owner), owned, member, or by the external claim; the
  // strongest role wins; a token's space limit keeps only the spaces it names.
  await sql`
    create function memory_service_space_roles() returns table (space text, role text)
      language plpgsql stable set search_path from current
    as $$
    begin
      perform set_config('memory_service.reading_memberships', 'on', true);
      return query
        with principal as (
          select current_setting('memory_service.subject', true) as subject,
                 nullif(current_setting('memory_service.space_limit', true), '')::jsonb as space_limit,
                 coalesce(nullif(current_setting('memory_service.groups', true), ''), '[]')::jsonb as groups),
        granted as (
          select p.subject as space, 3 as strength from principal p where p.subject <> '' and p.subject not like 'space:%'
          union all
          select s.id, 3 from spaces s join principal p on s.owner = p.subject
          union all
          select m.space_id, case m.role when 'writer' then 2 else 1 end from space_members m join principal p on m.member = p.subject
          union all
          select s.id, case s.external_role when 'writer' then 2 else 1 end
            from spaces s join principal p on s.external_group is not null and p.groups ? s.external_group)
        select g.space, (array['reader', 'writer', 'owner'])[max(g.strength)]
          from granted g, principal p
         where p.space_limit is null or p.space_limit ? g.space
         group by g.space;
      perform set_config('memory_service.reading_memberships', 'off', true);
    end $$`.execute(db);
  await sql`
    create function memory_service_readable_spaces() returns text[] language sql stable set search_path from current as $$
      select coalesce(array_agg(space), '{}') from memory_service_space_roles()
    $$`.execute(db);
  await sql`
    create function memory_service_writable_spaces() returns text[] language sql stable set search_path from current as $$
      select coalesce(array_agg(space), '{}') from memory_service_space_roles() where role in ('owner', 'writer')
    $$`.execute(db);
  await sql`
    create function memory_service_owned_spaces() returns text[] language sql stable set search_path from current as $$
      select coalesce(array_agg(space), '{}') from memory_service_space_roles() where role = 'owner'
    $$`.execute(db);

  const everyone = sql`current_setting('memory_service.all_subjects', true) = 'on'`;
  const readable = sql`(${everyone} or subject = any ((select memory_service_readable_spaces())::text[]))`;
  const writable = sql`(${everyone} or subject = any ((select memory_service_writable_spaces())::text[]))`;
  // Readers count their recalls (the brief's "often recalled"), so memory_recalls is written on reading: a row
  // only for a memory of the same space (its key is the row's own), so that no one can plant a count under their
  // key for another space's memory (its primary key is the memory id alone). Deleting one is a writer's.
  const countsItsOwnMemory = sql`(${readable} and exists (select 1 from memories m where m.id = memory_recalls.memory_id and m.subject = memory_recalls.subject))`;
  for (const [table, insert, update, remove] of [
    ['memories', writable, writable, writable],
    ['tombstones', writable, writable, writable],
    ['memory_restatements', writable, writable, writable],
    ['memory_terms', writable, writable, writable],
    ['memory_terms_pending', writable, writable, writable],
    ['subject_stats', writable, writable, writable],
    ['memory_recalls', countsItsOwnMemory, readable, writable],
  ] as const) {
    await sql`drop policy ${sql.id(`${table}_subject_isolation`)} on ${sql.table(table)}`.execute(db);
    await sql`create policy ${sql.id(`${table}_space_read`)} on ${sql.table(table)} for select using ${readable}`.execute(db);
    await sql`create policy ${sql.id(`${table}_space_insert`)} on ${sql.table(table)} for insert with check ${insert}`.execute(db);
    await sql`create policy ${sql.id(`${table}_space_update`)} on ${sql.table(table)} for update using ${update} with check ${table === 'memory_recalls' ? countsItsOwnMemory : update}`.execute(db);
    await sql`create policy ${sql.id(`${table}_space_delete`)} on ${sql.table(table)} for delete using ${remove}`.execute(db);
  }

  for (const table of ['spaces', 'space_members']) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`alter table ${sql.table(table)} force row level security`.execute(db);
  }
  const owned = (column: string) => sql`(${everyone} or ${sql.ref(column)} = any ((select memory_service_owned_spaces())::text[]))`;
  const principal = sql`current_setting('memory_service.subject', true)`;
  const lookup = sql`current_setting('memory_service.reading_memberships', true) = 'on'`;
  // A space is seen by its members; made by anyone (as its owner); renamed, handed on and deleted by its owner.
  await sql`create policy spaces_read on spaces for select using (${lookup} or ${everyone} or id = any ((select memory_service_readable_spaces())::text[]))`.execute(db);
  await sql`create policy spaces_insert on spaces for insert with check (${everyone} or owner = ${principal})`.execute(db);
  await sql`create policy spaces_update on spaces for update using ${owned('id')} with check ${owned('id')}`.execute(db);
  await sql`create policy spaces_delete on spaces for delete using ${owned('id')}`.execute(db);
  // Members are seen by the space's members; added, changed and removed by its owner; a member may leave.
  await sql`create policy space_members_read on space_members for select using (${lookup} or ${everyone} or space_id = any ((select memory_service_readable_spaces())::text[]))`.execute(db);
  await sql`create policy space_members_insert on space_members for insert with check ${owned('space_id')}`.execute(db);
  await sql`create policy space_members_update on space_members for update using ${owned('space_id')} with check ${owned('space_id')}`.execute(db);
  await sql`create policy space_members_delete on space_members for delete using (${owned('space_id')} or member = ${principal})`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const mine = sql`subject = current_setting('memory_service.subject', true) or current_setting('memory_service.all_subjects', true) = 'on'`;
  for (const table of ['memories', 'tombstones', 'memory_restatements', 'memory_terms', 'memory_terms_pending', 'subject_stats', 'memory_recalls']) {
    for (const command of ['read', 'insert', 'update', 'delete']) await sql`drop policy ${sql.id(`${table}_space_${command}`)} on ${sql.table(table)}`.execute(db);
    await sql`create policy ${sql.id(`${table}_subject_isolation`)} on ${sql.table(table)} using (${mine}) with check (${mine})`.execute(db);
  }
  await sql`alter table memories drop column author`.execute(db);
  await sql`drop table space_members`.execute(db);
  await sql`drop table spaces`.execute(db);
  for (const fn of ['memory_service_owned_spaces', 'memory_service_writable_spaces', 'memory_service_readable_spaces', 'memory_service_space_roles']) {
    await sql`drop function ${sql.id(fn)}()`.execute(db);
  }
}
