import { sql } from 'kysely';
import type { StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import type { ImportedTimestamps, NewMemory, RemovedMemory, TombstoneMatch } from './records.js';
import { nearTombstonesQuery, toTombstoneMatch, type TombstoneMatchRow as TombstoneRow } from './tombstones.js';

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** Inserts one memory of the subject; returns its id. An import keeps the file's creation and update times. */
export async function insertMemory(
  trx: DbTransaction,
  subject: string,
  memory: NewMemory,
  vector: StoredVector,
  timestamps?: ImportedTimestamps,
): Promise<number> {
  const row = await insertQuery(trx, subject, memory, vector, timestamps).executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * insertMemory, and in the same statement the subject's tombstones at or above `minSimilarity` to the memory's
 * vector, nearest first (at most `limit`): remember reports them as the fact's earlier corrections.
 */
export async function insertMemoryNearTombstones(
  trx: DbTransaction,
  subject: string,
  memory: NewMemory,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
): Promise<{ memoryId: number; tombstones: TombstoneMatch[] }> {
  // One row per tombstone found (nearest first), or one whose tombstone columns are null.
  const { rows } = await sql<{ inserted: string | number } & Nullable<TombstoneRow>>`
    with inserted as (${insertQuery(trx, subject, memory, vector)})
    select inserted.id as inserted, near.*
      from inserted
      left join lateral (${nearTombstonesQuery(trx, subject, vector, minSimilarity, limit)}) as near on true
     order by near.similarity desc`.execute(trx);
  const first = rows[0];
  if (first === undefined) throw new Error('the insert returned no row');
  const found = rows.filter((row): row is { inserted: string | number } & TombstoneRow => row.memory_id !== null);
  return { memoryId: Number(first.inserted), tombstones: found.map(toTombstoneMatch) };
}

function insertQuery(trx: DbTransaction, subject: string, memory: NewMemory, vector: StoredVector, timestamps?: ImportedTimestamps) {
  return trx
    .insertInto('memories')
    .values({
      subject,
      text: memory.text,
      tags: [...memory.tags],
      source_provider: memory.sourceProvider ?? null,
      importance: memory.importance,
      capture_mode: memory.captureMode ?? null,
      session_id: memory.sessionId ?? null,
      expires_at: memory.expiresAt ?? null,
      ...(memory.lastConfirmedAt === undefined ? {} : { last_confirmed_at: memory.lastConfirmedAt }),
      embedding: vector.literal,
      embedding_model: vector.model,
      embedding_dimensions: vector.dimensions,
      ...(timestamps === undefined ? {} : { created_at: timestamps.createdAt, updated_at: timestamps.updatedAt }),
    })
    .returning('id');
}

/** Deletes one of the subject's memories; undefined when it has no memory with that id. */
export async function deleteMemory(trx: DbTransaction, subject: string, memoryId: number): Promise<RemovedMemory | undefined> {
  const row = await trx
    .deleteFrom('memories')
    .where('subject', '=', subject)
    .where('id', '=', memoryId)
    .returning(['id', 'text', 'tags', 'importance', 'embedding', 'embedding_model', 'embedding_dimensions', 'created_at'])
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: Number(row.id),
    text: row.text,
    tags: row.tags,
    importance: Number(row.importance),
    embedding: row.embedding,
    embeddingModel: row.embedding_model,
    embeddingDimensions: row.embedding_dimensions,
    createdAt: row.created_at,
  };
}

/** Sets last_confirmed_at to now; undefined when the subject has no memory with that id. */
export async function confirmMemory(trx: DbTransaction, subject: string, memoryId: number): Promise<Date | undefined> {
  const row = await trx
    .updateTable('memories')
    .set({ last_confirmed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('subject', '=', subject)
    .where('id', '=', memoryId)
    .returning('last_confirmed_at')
    .executeTakeFirst();
  return row?.last_confirmed_at;
}
