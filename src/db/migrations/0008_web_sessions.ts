import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * Sessions of the web page (`{BaseUrl}/`). A session is looked up by its cookie before anyone is known, so the
 * table has no row-level security by subject (like the authorization server's own objects); only the web
 * layer reaches it, and a subject's rows are deleted with the rest of its data. The cookie's value is never
 * stored: `id_hash` is a keyed hash of it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table web_sessions (
      id_hash       text primary key,
      subject       text not null,
      scopes        text not null,
      created_at    timestamptz not null default now(),
      last_seen_at  timestamptz not null default now(),
      expires_at    timestamptz not null
    )`.execute(db);
  // Delete-all and the per-person cap go by subject; the sweep of ended sessions reads a table that holds only
  // live sign-ins (at most a few per person) and stops at its batch limit.
  await sql`create index web_sessions_subject_idx on web_sessions (subject, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table web_sessions`.execute(db);
}
