import { sql } from 'kysely';
import { passagesParameter, vectorParameter, type MemoryVectors } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import { fromRestatementsJson, restatementsJson } from './restatements.js';
import type { ImportedTimestamps, NewMemory, RemovedMemory, TombstoneMatch } from './records.js';
import { nearTombstonesQuery, toTombstoneMatch, type TombstoneMatchRow as TombstoneRow } from './tombstones.js';

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** Inserts one memory of the subject; returns its id. An import keeps the file's creation and update times. */
export async function insertMemory(
  trx: DbTransaction,
  subject: string,
  memory: NewMemory,
  vectors: MemoryVectors,
  timestamps?: ImportedTimestamps,
): Promise<number> {
  const row = await insertQuery(trx, subject, memory, vectors, timestamps).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * insertMemory, and in the same statement the subject's tombstones at or above `minSimilarity` to the memory's
 * vector, nearest first (at most `limit`): remember reports them as the fact's earlier corrections.
 *
 * Only the memory's first `termsAtOnce` memory_terms rows are written (migration 0012): `termsPending` says
 * whether more are left for continueMemoryTerms, each step a transaction of its own, so that a long text does
 * not hold PGlite's one connection for the whole of its ~1,000 rows.
 */
export async function insertMemoryNearTombstones(
  trx: DbTransaction,
  subject: string,
  memory: NewMemory,
  vectors: MemoryVectors,
  options: { minSimilarity: number; limit: number; termsAtOnce: number },
): Promise<{ memoryId: number; tombstones: TombstoneMatch[]; termsPending: boolean }> {
  // One row per tombstone found (nearest first), or one whose tombstone columns are null. The setting is made in
  // a CTE the main query reads, so it is in force when the insert's AFTER trigger runs, at the statement's end.
  // The tombstones are compared with the inserted row's vector (parsed once; see cosineDistance), and
  // length(search_vector) is the number of its lexemes: of memory_terms rows it has.
  const { rows } = await sql<{ inserted: string | number; lexemes: number } & Nullable<TombstoneRow>>`
    with stepped as materialized (select set_config('memory_service.terms_at_once', ${String(options.termsAtOnce)}, true)),
         inserted as (${insertQuery(trx, subject, memory, vectors).returning(['id', 'embedding', sql<number>`length(search_vector)`.as('lexemes')])})
    select inserted.id as inserted, inserted.lexemes, near.*
      from inserted
      cross join stepped
      left join lateral (${nearTombstonesQuery(subject, vectors.whole.model, sql`inserted.embedding`, options.minSimilarity, options.limit)}) as near on true
     order by near.similarity desc`.execute(trx);
  const first = rows[0];
  if (first === undefined) throw new Error('the insert returned no row');
  const found = rows.filter((row): row is { inserted: string | number; lexemes: number } & TombstoneRow => row.memory_id !== null);
  return { memoryId: Number(first.inserted), tombstones: found.map(toTombstoneMatch), termsPending: Number(first.lexemes) > options.termsAtOnce };
}

function insertQuery(trx: DbTransaction, subject: string, memory: NewMemory, vectors: MemoryVectors, timestamps?: ImportedTimestamps) {
  const vector = vectors.whole;
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
      embedding: vectorParameter(vector),
      embedding_model: vector.model,
      embedding_dimensions: vector.dimensions,
      passage_embeddings: passagesParameter(vectors),
      ...(timestamps === undefined ? {} : { created_at: timestamps.createdAt, updated_at: timestamps.updatedAt }),
      ...(memory.author === undefined ? {} : { author: memory.author }),
    });
}

/** Deletes one of the subject's memories; undefined when it has no memory with that id. */
export async function deleteMemory(trx: DbTransaction, subject: string, memoryId: number): Promise<RemovedMemory | undefined> {
  const row = await trx
    .deleteFrom('memories')
    .where('subject', '=', subject)
    .where('id', '=', memoryId)
    .returning(['id', 'text', 'tags', 'importance', 'embedding', 'embedding_model', 'embedding_dimensions', 'created_at'])
    // NULL passages mark a memory whose whole vector awaits reembed (migrations 0013 and 0014).
    .returning(sql<boolean>`passage_embeddings is not null`.as('whole_from_passages'))
    // Read before the foreign key's cascade deletes them, at the statement's end.
    .returning(restatementsJson(sql`memories.id`).as('restatements'))
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
    wholeFromPassages: row.whole_from_passages,
    createdAt: row.created_at,
    restatements: fromRestatementsJson(row.restatements),
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
