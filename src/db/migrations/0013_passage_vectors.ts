import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * A memory of several sentences also keeps a vector for each of them (its passages), with the same model as
 * `embedding`. A sentence-encoder's one vector for a whole paragraph is an average that a question about one of
 * its sentences may not come near; recall also compares the question with each passage (vector-ranking.ts).
 *
 * NULL: not split yet (rows written before this migration; `memory-service reembed` fills them in). An empty
 * array: a text of one passage, whose `embedding` says everything. Left to TOAST: several 2 KB vectors do not
 * fit inline, and only multi-sentence rows carry any.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table memories add column passage_embeddings vector[]`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table memories drop column passage_embeddings`.execute(db);
}
