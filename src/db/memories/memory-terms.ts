import { sql } from 'kysely';
import type { DbTransaction } from '../schema.js';

/**
 * Writes the next `step` memory_terms rows of a memory whose rows are being written in steps (migration 0012);
 * true once every row is written (and also for a memory with none pending, or one deleted meanwhile).
 */
export async function continueMemoryTerms(trx: DbTransaction, subject: string, memoryId: number, step: number): Promise<boolean> {
  const { rows } = await sql<{ done: boolean }>`select memory_terms_continue(${subject}, ${memoryId}, ${step}) as done`.execute(trx);
  return rows[0]?.done === true;
}

/** Memories (of every subject the transaction admits) whose memory_terms rows are not all written yet, oldest first. */
export async function pendingTermMemories(trx: DbTransaction, limit: number): Promise<{ subject: string; memoryId: number }[]> {
  const rows = await trx.selectFrom('memory_terms_pending').select(['subject', 'memory_id']).orderBy('memory_id').limit(limit).execute();
  return rows.map((row) => ({ subject: row.subject, memoryId: Number(row.memory_id) }));
}
