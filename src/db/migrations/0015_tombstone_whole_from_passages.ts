import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * A tombstone's vector is compared with a text remembered again (`previously_corrected`), so it must be made as
 * that text's vector is: since 0014, from the mean of its passages. Tombstones written before this migration have
 * the model's vector for the paragraph, and no other column says so, so each row now says how its vector was
 * made: `whole_from_passages`, false for every existing row (`memory-service reembed` embeds them again; those of
 * one passage come out the same) and written by the service for every new one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tombstones add column whole_from_passages boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tombstones drop column whole_from_passages`.execute(db);
}
