import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/** The caller's own words on why a memory was forgotten or corrected (the `reason` argument of those tools). */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tombstones add column note text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tombstones drop column note`.execute(db);
}
