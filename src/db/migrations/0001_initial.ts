import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists vector with schema public`.execute(db);

  await sql`
    create table memories (
      id                    bigint generated always as identity primary key,
      subject               text not null,
      text                  text not null,
      tags                  text[] not null default '{}',
      source_provider       text,
      importance            double precision not null default 0.5 check (importance between 0 and 1),
      capture_mode          text check (capture_mode in ('explicit', 'inferred')),
      session_id            text,
      expires_at            timestamptz,
      last_confirmed_at     timestamptz not null default now(),
      embedding             vector not null,
      embedding_model       text not null,
      embedding_dimensions  integer not null,
      search_vector         tsvector generated always as (to_tsvector('english', text)) stored,
      created_at            timestamptz not null default now(),
      updated_at            timestamptz not null default now(),
      constraint memories_embedding_dimensions_match check (vector_dims(embedding) = embedding_dimensions)
    )`.execute(db);
  await sql`create index memories_subject_created_idx on memories (subject, created_at desc, id desc)`.execute(db);
  await sql`create index memories_tags_idx on memories using gin (tags)`.execute(db);
  await sql`create index memories_search_vector_idx on memories using gin (search_vector)`.execute(db);

  await sql`
    create table tombstones (
      id                    bigint generated always as identity primary key,
      memory_id             bigint not null unique,
      subject               text not null,
      text                  text not null,
      tags                  text[] not null default '{}',
      embedding             vector not null,
      embedding_model       text not null,
      embedding_dimensions  integer not null,
      reason                text not null check (reason in ('corrected', 'forgotten')),
      replaced_by           bigint,
      memory_created_at     timestamptz not null,
      tombstoned_at         timestamptz not null default now()
    )`.execute(db);
  await sql`create index tombstones_subject_idx on tombstones (subject, tombstoned_at desc)`.execute(db);

  // Second line of defence behind the WHERE subject = ... of every query: rows are visible only to the
  // subject named in the transaction-local setting. '*' is for maintenance (re-embedding) and operators.
  for (const table of ['memories', 'tombstones']) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`alter table ${sql.table(table)} force row level security`.execute(db);
    await sql`
      create policy ${sql.id(`${table}_subject_isolation`)} on ${sql.table(table)}
        using (subject = current_setting('memory_service.subject', true)
               or current_setting('memory_service.subject', true) = '*')
        with check (subject = current_setting('memory_service.subject', true)
                    or current_setting('memory_service.subject', true) = '*')`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table tombstones`.execute(db);
  await sql`drop table memories`.execute(db);
}
