import { sql } from 'kysely';
import { cosineDistance, cosineSimilarity, type StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import { NO_FILTERS, notExpired } from './filters.js';
import type { NearMemory } from './records.js';
import { sizeForVectorRanking, vectorRanking } from './vector-ranking.js';

/**
 * How wide the index walk searches for a large subject's near-duplicates (hnsw.ef_search): on the synthetic 100k
 * subject of bench/heavy-subject.ts (clusters of ~400 near-identical vectors, harder than real text), a search
 * of 100 or 200 missed the stored row itself for 1 of 200 texts remembered again, 400 found all of them (another
 * build of that graph left 2 rows unreachable at any width: hence the lookup by text below). The walk
 * returns only the `limit` nearest: the index hands its first candidates over in exact distance order, so
 * the first `limit` of a search this wide are the same whether 20 or 200 are read.
 */
const WALK_EF_SEARCH = 400;

/**
 * The subject's live memories of the same embedding model at or above `minSimilarity`, best first.
 *
 * A subject of up to `exactScanLimit` memories (every subject in normal use) is scanned exactly, so no
 * near-duplicate is missed. A larger one would cost a scan of all its rows on every remember (~0.1 s at
 * 100k), so its nearest rows come from vectorRanking, which walks the HNSW index with an iterative scan
 * (and falls back to the exact scan when the walk comes back short); the similarity cut and exact order are
 * then applied to those rows. Near-duplicates lie far above the similarities an approximate walk gets wrong,
 * but a graph can leave a row unreachable: a memory whose text is exactly `text` is therefore looked up by
 * its text too (migration 0009's index), so the same text sent again is always among the candidates, first.
 */
export async function findNearMemories(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
  exactScanLimit: number,
  text?: string,
): Promise<NearMemory[]> {
  const size = await sizeForVectorRanking(trx, subject, NO_FILTERS, exactScanLimit, WALK_EF_SEARCH);
  let nearest: number[] | undefined;
  if (size.memories > exactScanLimit) {
    const ranked = await vectorRanking(trx, subject, NO_FILTERS, vector, limit, { exactScanLimit, size, efSearch: WALK_EF_SEARCH });
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
  if (nearest !== undefined) {
    const walked = nearest;
    if (text === undefined) query = query.where('id', 'in', walked);
    else {
      // The same text first, whatever the vectors say (they agree, but for a provider's rounding).
      query = query
        .where((eb) => eb.or([eb('id', 'in', walked), sql<boolean>`(md5(text) = md5(${text}) and text = ${text})`]))
        .orderBy(sql`text = ${text}`, 'desc');
    }
  }
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
