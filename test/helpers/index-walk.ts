import { sql } from 'kysely';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { sizeForVectorRanking, walkAtOnce, walkIndexWith } from '../../src/db/memories/vector-ranking.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import type { StoredVector } from '../../src/db/pgvector.js';

/**
 * The ids recall's index walk ranks for `subject` (the walk with another statement alongside, as recall-plan.ts
 * runs it for a large subject), the first `depth`. An exact-scan limit of 0 sends a small subject down that path.
 */
export async function walkedAlongside(db: DatabaseHandle, subject: string, vector: StoredVector, depth: number): Promise<number[]> {
  return db.withSubject(subject, 'ranking', async (trx) => {
    const size = await sizeForVectorRanking(trx, subject, NO_FILTERS, 0, 20);
    const restore = walkAtOnce(size, vector, 0);
    if (restore === undefined) throw new Error(`${subject} should walk the index at once`);
    const walked = await walkIndexWith(trx, subject, vector, depth, restore, size.inConversations, [{ query: sql`select 1 as one`, order: sql`one` }] as const);
    return walked.ids;
  });
}
