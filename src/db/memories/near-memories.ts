import { cosineDistance, cosineSimilarity, type StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import { NO_FILTERS, notExpired } from './filters.js';
import type { NearMemory } from './records.js';
import { subjectMemoryCount } from './subject-stats.js';
import { vectorRanking } from './vector-ranking.js';

/**
 * How many of a large subject's nearest rows the index walk returns before the similarity cut, per candidate
 * asked for: 10 × 20 = 200 rows, which sets hnsw.ef_search to 400 (configureIterativeScan). On the synthetic
 * 100k subject of bench/heavy-subject.ts (clusters of ~400 near-identical vectors, harder than real text), a
 * walk of 40 rows (ef_search 100) missed the stored row itself for 1 of 200 texts remembered again; 200 rows
 * found all of them.
 */
const WALK_DEPTH_FACTOR = 10;

/**
 * The subject's live memories of the same embedding model at or above `minSimilarity`, best first.
 *
 * A subject of up to `exactScanLimit` memories (every subject in normal use) is scanned exactly, so no
 * near-duplicate is missed. A larger one would cost a scan of all its rows on every remember (~0.1 s at
 * 100k), so its nearest rows come from vectorRanking, which walks the HNSW index with an iterative scan
 * (and falls back to the exact scan when the walk comes back short); the similarity cut and exact order are
 * then applied to those rows. Near-duplicates lie far above the similarities an approximate walk gets wrong.
 */
export async function findNearMemories(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
  exactScanLimit: number,
): Promise<NearMemory[]> {
  const subjectMemories = await subjectMemoryCount(trx, subject);
  let nearest: number[] | undefined;
  if (subjectMemories > exactScanLimit) {
    const ranked = await vectorRanking(trx, subject, NO_FILTERS, vector, limit * WALK_DEPTH_FACTOR, { exactScanLimit, subjectMemories });
    nearest = ranked.ids;
    if (nearest.length === 0) return [];
  }
  const similarity = cosineSimilarity(vector);
  let query = trx
    .selectFrom('memories')
    .select(['id', 'text', 'tags', 'created_at', 'last_confirmed_at', similarity.as('similarity')])
    .where('subject', '=', subject)
    .where('embedding_model', '=', vector.model)
    .where(notExpired)
    .where(similarity, '>=', minSimilarity);
  if (nearest !== undefined) query = query.where('id', 'in', nearest);
  const rows = await query.orderBy(cosineDistance(vector)).orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: Number(row.id),
    text: row.text,
    similarity: Number(row.similarity),
    tags: row.tags,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
  }));
}
