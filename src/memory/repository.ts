import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { NearDuplicate, NewMemory, PreviouslyCorrected } from './types.js';

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
    .select(['memory_id', 'text', 'reason', 'replaced_by', 'tombstoned_at', similarity.as('similarity')])
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
    similarity: round(Number(row.similarity)),
    tombstoned_at: row.tombstoned_at.toISOString(),
  }));
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
