import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * A memory of several passages now takes the mean of its passages' vectors as its whole vector, where it had the
 * model's vector for the whole paragraph (src/memory/passages.ts). The two differ (cosine 0.58–0.98, median 0.87
 * on LoCoMo's turns), and remember compares a new text's vector with the stored ones, so an old row would no
 * longer match the same text remembered again. Such rows are marked as not split (NULL passages, as before 0013):
 * `memory-service reembed` embeds them again; until then recall ranks them by their whole text, as it did rows
 * written before 0013. Rows of one passage keep their vectors: those are made as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The owner is subject to row-level security too (forced): all_subjects admits every subject.
  await sql`select set_config('memory_service.all_subjects', 'on', true)`.execute(db);
  await sql`update memories set passage_embeddings = null where cardinality(passage_embeddings) > 0`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to undo: a row without passages is one reembed splits, whichever way its whole vector is made.
}
