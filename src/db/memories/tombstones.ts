import { sql, type RawBuilder } from 'kysely';
import type { DbTransaction, RestatementJson } from '../schema.js';
import { fromRestatementsJson, toRestatementsJson } from './restatements.js';
import { microsecondsUtc } from './list-page.js';
import type { RemovedMemory, TombstoneMatch, TombstonePosition, TombstoneReason, TombstoneRecord } from './records.js';

/**
 * Records a removed memory, so remember can report it when the same fact comes back. An import gives the
 * file's `tombstonedAt`; otherwise it is now.
 */
export async function insertTombstone(
  trx: DbTransaction,
  subject: string,
  removed: Omit<RemovedMemory, 'importance'>,
  reason: TombstoneReason,
  replacedBy: number | undefined,
  note: string | undefined,
  tombstonedAt?: Date,
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
      whole_from_passages: removed.wholeFromPassages,
      restatements: toRestatementsJson(removed.restatements),
      reason,
      replaced_by: replacedBy ?? null,
      memory_created_at: removed.createdAt,
      note: note ?? null,
      ...(tombstonedAt === undefined ? {} : { tombstoned_at: tombstonedAt }),
    })
    .execute();
}

/**
 * The subject's tombstones (corrected or forgotten memories) of `model` near `vector`, nearest first: a query
 * to run inside another statement, `vector` an expression of it (the row it has just inserted, whose vector
 * the database has parsed already).
 */
export function nearTombstonesQuery(subject: string, model: string, vector: RawBuilder<unknown>, minSimilarity: number, limit: number): RawBuilder<TombstoneMatchRow> {
  return sql<TombstoneMatchRow>`
    select memory_id, text, reason, replaced_by, note, tombstoned_at, 1 - distance as similarity
      from (select memory_id, text, reason, replaced_by, note, tombstoned_at, tombstones.embedding <=> ${vector} as distance
              from tombstones
             where subject = ${subject} and embedding_model = ${model}) as scored
     where 1 - distance >= ${minSimilarity}
     order by distance
     limit ${limit}`;
}

/** A row of nearTombstonesQuery. */
export interface TombstoneMatchRow {
  memory_id: string | number;
  text: string;
  reason: TombstoneReason;
  replaced_by: string | number | null;
  note: string | null;
  tombstoned_at: Date;
  similarity: number;
}

export function toTombstoneMatch(row: TombstoneMatchRow): TombstoneMatch {
  return {
    memoryId: Number(row.memory_id),
    text: row.text,
    reason: row.reason,
    replacedBy: row.replaced_by === null ? undefined : Number(row.replaced_by),
    note: row.note ?? undefined,
    similarity: Number(row.similarity),
    tombstonedAt: row.tombstoned_at,
  };
}

interface TombstoneRow {
  id: string | number;
  memory_id: string | number;
  text: string;
  tags: string[];
  reason: TombstoneReason;
  replaced_by: string | number | null;
  note: string | null;
  memory_created_at: Date;
  tombstoned_at: Date;
  embedding_model: string;
  restatements: RestatementJson[] | string;
  position: string;
}

export interface ListedTombstone extends TombstoneRecord {
  /** This tombstone's position, for the next page to start after it. */
  readonly position: TombstonePosition;
}

/**
 * Up to `rows` of the subject's tombstones after `after`, newest or oldest first. Keyset pagination over the
 * (subject, tombstoned_at) index, the row id breaking ties.
 */
export async function tombstonePage(
  trx: DbTransaction,
  subject: string,
  request: { readonly after: TombstonePosition | undefined; readonly order: 'newest' | 'oldest'; readonly rows: number },
): Promise<ListedTombstone[]> {
  const newest = request.order === 'newest';
  const after =
    request.after === undefined
      ? sql`true`
      : newest
        ? sql`(tombstoned_at, id) < (${request.after.tombstonedAt}::timestamptz, ${request.after.id})`
        : sql`(tombstoned_at, id) > (${request.after.tombstonedAt}::timestamptz, ${request.after.id})`;
  const { rows } = await sql<TombstoneRow>`
    select id, memory_id, text, tags, reason, replaced_by, note, memory_created_at, tombstoned_at, embedding_model, restatements,
           ${microsecondsUtc('tombstoned_at')} as position
      from tombstones
     where subject = ${subject} and ${after}
     order by ${newest ? sql`tombstoned_at desc, id desc` : sql`tombstoned_at, id`}
     limit ${request.rows}`.execute(trx);
  return rows.map((row) => ({
    memoryId: Number(row.memory_id),
    text: row.text,
    tags: row.tags,
    reason: row.reason,
    replacedBy: row.replaced_by === null ? undefined : Number(row.replaced_by),
    note: row.note ?? undefined,
    memoryCreatedAt: row.memory_created_at,
    tombstonedAt: row.tombstoned_at,
    embeddingModel: row.embedding_model,
    restatements: fromRestatementsJson(row.restatements),
    position: { tombstonedAt: row.position, id: Number(row.id) },
  }));
}

/** Deletes the subject's tombstone of `memoryId`, or all its tombstones when undefined; returns how many. */
export async function eraseTombstones(trx: DbTransaction, subject: string, memoryId: number | undefined): Promise<number> {
  let query = trx.deleteFrom('tombstones').where('subject', '=', subject);
  if (memoryId !== undefined) query = query.where('memory_id', '=', memoryId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function countTombstones(trx: DbTransaction, subject: string): Promise<number> {
  const row = await trx.selectFrom('tombstones').select(sql<string>`count(*)`.as('n')).where('subject', '=', subject).executeTakeFirstOrThrow();
  return Number(row.n);
}
