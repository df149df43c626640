import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * The principal's spaces worked out once a statement, not once for each table and policy a statement touches.
 * Every policy of migration 0020 asks memory_service_readable_spaces() (or the writable or owned ones), and each
 * asking ran memory_service_space_roles() anew: five or six times in recall's ranking statement, about 0.1 ms each
 * on PostgreSQL (bench/README.md, "Row-level security once a statement").
 *
 * The three lists are now kept, with what they were worked out for, in the transaction's setting
 * memory_service.space_cache, and used again while that still holds:
 * - the same principal (subject, space limit, groups);
 * - the same snapshot (pg_current_snapshot()): under read committed each statement takes its own, and one that
 *   differs in any transaction committed since, so a membership changed by another transaction counts from the
 *   next statement, as before;
 * - no change to spaces or space_members in this transaction since: their statement triggers clear the setting
 *   (the transaction's own changes do not change its snapshot's text).
 * The setting is local to the transaction: nothing outlives it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function memory_service_space_cache() returns text[] language plpgsql stable set search_path from current as $$
    declare
      held_for text := jsonb_build_array(current_setting('memory_service.subject', true), current_setting('memory_service.space_limit', true),
                                         current_setting('memory_service.groups', true), pg_current_snapshot()::text)::text;
      held text[] := nullif(current_setting('memory_service.space_cache', true), '')::text[];
      lists text[];
    begin
      if held is not null and held[1] = held_for then return held; end if;
      select array[held_for,
                   coalesce(array_agg(space), '{}')::text,
                   coalesce(array_agg(space) filter (where role in ('owner', 'writer')), '{}')::text,
                   coalesce(array_agg(space) filter (where role = 'owner'), '{}')::text]
        into lists from memory_service_space_roles();
      perform set_config('memory_service.space_cache', lists::text, true);
      return lists;
    end $$`.execute(db);
  await sql`
    create or replace function memory_service_readable_spaces() returns text[] language sql stable set search_path from current as $$
      select (memory_service_space_cache())[2]::text[]
    $$`.execute(db);
  await sql`
    create or replace function memory_service_writable_spaces() returns text[] language sql stable set search_path from current as $$
      select (memory_service_space_cache())[3]::text[]
    $$`.execute(db);
  await sql`
    create or replace function memory_service_owned_spaces() returns text[] language sql stable set search_path from current as $$
      select (memory_service_space_cache())[4]::text[]
    $$`.execute(db);
  await sql`
    create function memory_service_space_cache_clear() returns trigger language plpgsql as $$
    begin
      perform set_config('memory_service.space_cache', '', true);
      return null;
    end $$`.execute(db);
  for (const table of ['spaces', 'space_members']) {
    await sql`create trigger ${sql.id(`${table}_space_cache_clear`)} after insert or update or delete or truncate on ${sql.table(table)}
              for each statement execute function memory_service_space_cache_clear()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['spaces', 'space_members']) await sql`drop trigger ${sql.id(`${table}_space_cache_clear`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function memory_service_space_cache_clear()`.execute(db);
  for (const [fn, where] of [
    ['memory_service_readable_spaces', sql``],
    ['memory_service_writable_spaces', sql`where role in ('owner', 'writer')`],
    ['memory_service_owned_spaces', sql`where role = 'owner'`],
  ] as const) {
    await sql`
      create or replace function ${sql.id(fn)}() returns text[] language sql stable set search_path from current as $$
        select coalesce(array_agg(space), '{}') from memory_service_space_roles() ${where}
      $$`.execute(db);
  }
  await sql`drop function memory_service_space_cache()`.execute(db);
}
