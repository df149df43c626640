import { cosineDistance, cosineSimilarity, type StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import type { RemovedMemory, TombstoneMatch, TombstoneReason } from './records.js';

/** Records a removed memory, so remember can report it when the same fact comes back. */
export async function insertTombstone(
  trx: DbTransaction,
  subject: string,
  removed: RemovedMemory,
  reason: TombstoneReason,
  replacedBy: number | undefined,
  note: string | undefined,
): Promise<void> {
  await trx
    .insertInto('tombstones')
    .values({
      memory_id: removed.id,
      subject,
      text: removed.text,
      tags: [...removed.tags],
      embedding: removed.embedding,
      embedding_model: removed.embeddingModel,
      embedding_dimensions: removed.embeddingDimensions,
      reason,
      replaced_by: replacedBy ?? null,
      memory_created_at: removed.createdAt,
      note: note ?? null,
    })
    .execute();
}

/** Tombstones (corrected or forgotten memories) of the subject that lie near the given vector, nearest first. */
export async function findNearTombstones(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
): Promise<TombstoneMatch[]> {
  const similarity = cosineSimilarity(vector);
  const rows = await trx
    .selectFrom('tombstones')
    .select(['memory_id', 'text', 'reason', 'replaced_by', 'note', 'tombstoned_at', similarity.as('similarity')])
    .where('subject', '=', subject)
    .where('embedding_model', '=', vector.model)
    .where(similarity, '>=', minSimilarity)
    .orderBy(cosineDistance(vector))
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    memoryId: Number(row.memory_id),
    text: row.text,
    reason: row.reason,
    replacedBy: row.replaced_by === null ? undefined : Number(row.replaced_by),
    note: row.note ?? undefined,
    similarity: Number(row.similarity),
    tombstonedAt: row.tombstoned_at,
  }));
}
