import type { DbTransaction } from '../schema.js';

/** The subject's number of memories, expired ones included, as kept by triggers (migration 0005). */
export async function subjectMemoryCount(trx: DbTransaction, subject: string): Promise<number> {
  const row = await trx.selectFrom('subject_stats').select('memories').where('subject', '=', subject).executeTakeFirst();
  return Number(row?.memories ?? 0);
}
