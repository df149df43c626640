import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { NearDuplicate, NewMemory, PreviouslyCorrected, TombstoneReason } from './types.js';

/** All SQL of the write path. Every function runs inside a subject-scoped transaction. */
type Trx = Transaction<Database>;

export interface StoredVector {
  readonly literal: string;
  readonly model: string;
  readonly dimensions: number;
}

/** Serialises writers of one subject, so two identical concurrent skip_if_near calls cannot both insert. */
export async function lockSubjectForWrite(trx: Trx, subject: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${subject}, 0))`.execute(trx);
}

/**
 * The subject's live memories of the same embedding model at or above `minSimilarity`, best first.
 * An exact scan over the subject's rows: a per-subject filter on an approximate index can miss rows.
 */
export async function findNearMemories(
  trx: Trx,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
): Promise<NearDuplicate[]> {
  const similarity = sql<number>`1 - (embedding <=> ${vector.literal}::vector)`;
  const rows = await trx
    .selectFrom('memories')
    .select(['id', 'text', 'tags', 'created_at', 'last_confirmed_at', similarity.as('similarity')])
    .where('subject', '=', subject)
    .where('embedding_model', '=', vector.model)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .where(similarity, '>=', minSimilarity)
    .orderBy(sql`embedding <=> ${vector.literal}::vector`)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    memory_id: Number(row.id),
    text: row.text,
    similarity: round(Number(row.similarity)),
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    last_confirmed_at: row.last_confirmed_at.toISOString(),
  }));
}

export async function insertMemory(trx: Trx, subject: string, memory: NewMemory, vector: StoredVector): Promise<number> {
  const row = await trx
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
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Tombstones (corrected or forgotten memories) of the subject that lie near the given vector. */
export async function findNearTombstones(
  trx: Trx,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
): Promise<PreviouslyCorrected[]> {
  const similarity = sql<number>`1 - (embedding <=> ${vector.literal}::vector)`;
  const rows = await trx
    .selectFrom('tombstones')
    .select(['memory_id', 'text', 'reason', 'replaced_by', 'note', 'tombstoned_at', similarity.as('similarity')])
    .where('subject', '=', subject)
    .where('embedding_model', '=', vector.model)
    .where(similarity, '>=', minSimilarity)
    .orderBy(sql`embedding <=> ${vector.literal}::vector`)
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    memory_id: Number(row.memory_id),
    text: row.text,
    reason: row.reason,
    ...(row.replaced_by === null ? {} : { replaced_by: Number(row.replaced_by) }),
    ...(row.note === null ? {} : { note: row.note }),
    similarity: round(Number(row.similarity)),
    tombstoned_at: row.tombstoned_at.toISOString(),
  }));
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** What a tombstone keeps of the memory it replaces. */
export interface RemovedMemory {
  readonly id: number;
  readonly text: string;
  readonly tags: string[];
  readonly importance: number;
  readonly embedding: string;
  readonly embeddingModel: string;
  readonly embeddingDimensions: number;
  readonly createdAt: Date;
}

/** Deletes one of the subject's memories; undefined when it has no memory with that id. */
export async function deleteMemory(trx: Trx, subject: string, memoryId: number): Promise<RemovedMemory | undefined> {
  const row = await trx
    .deleteFrom('memories')
    .where('subject', '=', subject)
    .where('id', '=', memoryId as never)
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

/** Records a removed memory, so remember can report it in previously_corrected. */
export async function insertTombstone(
  trx: Trx,
  subject: string,
  removed: RemovedMemory,
  reason: TombstoneReason,
  replacedBy: number | null,
  note: string | undefined,
): Promise<void> {
  await trx
    .insertInto('tombstones')
    .values({
      memory_id: removed.id,
      subject,
      text: removed.text,
      tags: removed.tags,
      embedding: removed.embedding,
      embedding_model: removed.embeddingModel,
      embedding_dimensions: removed.embeddingDimensions,
      reason,
      replaced_by: replacedBy,
      memory_created_at: removed.createdAt,
      note: note ?? null,
    })
    .execute();
}

/** Sets last_confirmed_at to now; undefined when the subject has no memory with that id. */
export async function confirmMemory(trx: Trx, subject: string, memoryId: number): Promise<Date | undefined> {
  const row = await trx
    .updateTable('memories')
    .set({ last_confirmed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('subject', '=', subject)
    .where('id', '=', memoryId as never)
    .returning('last_confirmed_at')
    .executeTakeFirst();
  return row?.last_confirmed_at;
}
