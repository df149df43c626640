import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * The built-in authorization server's objects (registered clients, grants, refresh tokens, authorization codes,
 * sign-in sessions, login pages in progress), which lived in the state file and in one process's memory, so that
 * several processes against one database agree on them. Every row belongs to one generation of the state file:
 * a new generation (the file deleted or replaced) finds nothing from before. These are not any subject's data:
 * row-level security admits them only to transactions that set `memory_service.authorization_server = 'on'`,
 * which only the authorization server's own transactions do, so no subject's transaction sees them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table oauth_objects (
      generation  text not null,
      kind        text not null,
      id          text not null,
      payload     jsonb not null,
      uid         text,
      grant_id    text,
      address     text,
      created_at  timestamptz not null default now(),
      used_at     timestamptz,
      expires_at  timestamptz not null,
      primary key (generation, kind, id)
    )`.execute(db);
  await sql`create index oauth_objects_uid_idx on oauth_objects (generation, kind, uid) where uid is not null`.execute(db);
  await sql`create index oauth_objects_grant_idx on oauth_objects (generation, grant_id) where grant_id is not null`.execute(db);
  await sql`create index oauth_objects_address_idx on oauth_objects (generation, kind, address) where address is not null`.execute(db);
  await sql`create index oauth_objects_age_idx on oauth_objects (generation, kind, created_at)`.execute(db);
  await sql`create index oauth_objects_expiry_idx on oauth_objects (expires_at)`.execute(db);
  await sql`alter table oauth_objects enable row level security`.execute(db);
  await sql`alter table oauth_objects force row level security`.execute(db);
  await sql`
    create policy oauth_objects_authorization_server on oauth_objects
      using (current_setting('memory_service.authorization_server', true) = 'on')
      with check (current_setting('memory_service.authorization_server', true) = 'on')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table oauth_objects`.execute(db);
}
