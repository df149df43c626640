import { cosineDistance, cosineSimilarity, type StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import { notExpired } from './filters.js';
import type { NearMemory } from './records.js';

/**
 * The subject's live memories of the same embedding model at or above `minSimilarity`, best first.
 * An exact scan over the subject's rows: a per-subject filter on an approximate index can miss rows.
 */
export async function findNearMemories(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
): Promise<NearMemory[]> {
  const similarity = cosineSimilarity(vector);
  const rows = await trx
    .selectFrom('memories')
    .select(['id', 'text', 'tags', 'created_at', 'last_confirmed_at', similarity.as('similarity')])
    .where('subject', '=', subject)
    .where('embedding_model', '=', vector.model)
    .where(notExpired)
    .where(similarity, '>=', minSimilarity)
    .orderBy(cosineDistance(vector))
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    text: row.text,
    similarity: Number(row.similarity),
    tags: row.tags,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
  }));
}
