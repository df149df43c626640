import { sql } from 'kysely';
import type { DbTransaction, RestatementJson } from '../schema.js';
import { fromRestatementsJson, restatementsJson } from './restatements.js';
import { microsecondsUtc } from './list-page.js';
import type { MemoryRow } from './read-memories.js';
import type { ListPosition, StoredMemory, TombstoneReason } from './records.js';

/** The SQL of export and import: whole rows in creation order, and the lookups that make an import idempotent. */

interface StoredMemoryRow extends Omit<MemoryRow, 'text_chars'> {
  updated_at: Date;
  embedding_model: string;
  restatements: RestatementJson[] | string;
  position: string;
}

/**
 * Up to `rows` of the subject's memories, expired ones included, oldest first, after `after`: a backward walk of
 * the (subject, created_at desc, id desc) index, so an export reads one subject's rows however large the table.
 */
export async function exportMemoryPage(
  trx: DbTransaction,
  subject: string,
  after: ListPosition | undefined,
  rows: number,
): Promise<{ memory: StoredMemory; position: ListPosition }[]> {
  const condition = after === undefined ? sql`true` : sql`(created_at, id) > (${after.createdAt}::timestamptz, ${after.id})`;
  const result = await sql<StoredMemoryRow>`
    select id, text, tags, importance, capture_mode, source_provider, session_id, created_at, updated_at,
           last_confirmed_at, expires_at, embedding_model, ${restatementsJson(sql`memories.id`)} as restatements,
           ${microsecondsUtc('created_at')} as position
      from memories
     where subject = ${subject} and ${condition}
     order by created_at, id
     limit ${rows}`.execute(trx);
  return result.rows.map((row) => ({
    memory: {
      id: Number(row.id),
      text: row.text,
      tags: row.tags,
      importance: Number(row.importance),
      captureMode: row.capture_mode,
      sourceProvider: row.source_provider,
      sessionId: row.session_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastConfirmedAt: row.last_confirmed_at,
      expiresAt: row.expires_at,
      embeddingModel: row.embedding_model,
      restatements: fromRestatementsJson(row.restatements),
    },
    position: { createdAt: row.position, id: Number(row.id) },
  }));
}

/** The subject's memories (expired ones included) whose text is one of `texts`, with their tags. */
export async function memoriesWithTexts(trx: DbTransaction, subject: string, texts: readonly string[]): Promise<{ id: number; text: string; tags: string[] }[]> {
  if (texts.length === 0) return [];
  const rows = await trx
    .selectFrom('memories')
    .select(['id', 'text', 'tags'])
    .where('subject', '=', subject)
    .where('text', '=', sql<string>`any(${[...new Set(texts)]}::text[])`)
    .execute();
  return rows.map((row) => ({ id: Number(row.id), text: row.text, tags: row.tags }));
}

/** The subject's tombstones whose text is one of `texts`. */
export async function tombstonesWithTexts(
  trx: DbTransaction,
  subject: string,
  texts: readonly string[],
): Promise<{ memoryId: number; text: string; reason: TombstoneReason; tombstonedAt: Date }[]> {
  if (texts.length === 0) return [];
  const rows = await trx
    .selectFrom('tombstones')
    .select(['memory_id', 'text', 'reason', 'tombstoned_at'])
    .where('subject', '=', subject)
    .where('text', '=', sql<string>`any(${[...new Set(texts)]}::text[])`)
    .execute();
  return rows.map((row) => ({ memoryId: Number(row.memory_id), text: row.text, reason: row.reason, tombstonedAt: row.tombstoned_at }));
}

/**
 * A new id from the memories' own sequence, for an imported tombstone: tombstones keep the id their memory had,
 * and one drawn from the sequence can never be a live memory's, nor another tombstone's.
 */
export async function allocateMemoryId(trx: DbTransaction): Promise<number> {
  const { rows } = await sql<{ id: string | number }>`select nextval(pg_get_serial_sequence('memories', 'id')) as id`.execute(trx);
  return Number(rows[0]!.id);
}
