import { sql, type RawBuilder } from 'kysely';
import { vectorParameter, type StoredVector } from '../pgvector.js';
import type { DbTransaction, RestatementJson } from '../schema.js';
import { inSpaces, type SpaceKeys } from './filters.js';
import type { NewMemory, Restatement, StoredRestatement } from './records.js';

/** A restatement to store: the incoming memory's fields that a restatement keeps, and its creation time on import. */
export type NewRestatement = Pick<NewMemory, 'text' | 'tags' | 'sourceProvider' | 'captureMode' | 'sessionId'> & { readonly createdAt?: Date };

/**
 * Keeps `restatement` as a restatement of the subject's memory `memoryId` and confirms that memory (its
 * last_confirmed_at becomes now), in one statement. A text the memory already holds verbatim (its own, or one of
 * its restatements') is not kept twice: nothing is lost, and the confirmation is made all the same. False when the
 * subject has no such memory (nothing written).
 */
export async function insertRestatement(
  trx: DbTransaction,
  subject: string,
  memoryId: number,
  restatement: NewRestatement,
  vector: StoredVector,
): Promise<boolean> {
  const { rows } = await sql<{ found: string | number }>`
    with confirmed as (
      update memories set last_confirmed_at = now(), updated_at = now()
       where subject = ${subject} and id = ${memoryId}
       returning id, text),
    kept as (
      insert into memory_restatements (memory_id, subject, text, tags, source_provider, capture_mode, session_id,
                                       embedding, embedding_model, embedding_dimensions)
      select confirmed.id, ${subject}, ${restatement.text}, ${[...restatement.tags]}::text[], ${restatement.sourceProvider ?? null},
             ${restatement.captureMode ?? null}, ${restatement.sessionId ?? null},
             ${vectorParameter(vector)}, ${vector.model}, ${vector.dimensions}
        from confirmed
       where confirmed.text <> ${restatement.text}
         and not exists (select 1 from memory_restatements
                          where subject = ${subject} and memory_id = confirmed.id and text = ${restatement.text})
      returning id)
    select (select count(*) from confirmed) as found, (select count(*) from kept) as kept`.execute(trx);
  return Number(rows[0]?.found ?? 0) > 0;
}

/**
 * Stores restatements read from an export file under the subject's memory `memoryId`, each with its own vector
 * and creation time, without confirming the memory (the file's last_confirmed_at already says when).
 */
export async function insertImportedRestatements(
  trx: DbTransaction,
  subject: string,
  memoryId: number,
  restatements: readonly { readonly restatement: Restatement; readonly vector: StoredVector }[],
): Promise<void> {
  if (restatements.length === 0) return;
  await trx
    .insertInto('memory_restatements')
    .values(
      restatements.map(({ restatement, vector }) => ({
        memory_id: memoryId,
        subject,
        text: restatement.text,
        tags: [...restatement.tags],
        source_provider: restatement.sourceProvider,
        capture_mode: restatement.captureMode,
        session_id: restatement.sessionId,
        embedding: vectorParameter(vector),
        embedding_model: vector.model,
        embedding_dimensions: vector.dimensions,
        created_at: restatement.createdAt,
      })),
    )
    .execute();
}

interface RestatementRow {
  id: string | number;
  memory_id: string | number;
  text: string;
  tags: string[];
  source_provider: string | null;
  capture_mode: 'explicit' | 'inferred' | null;
  session_id: string | null;
  created_at: Date;
}

function toRestatement(row: RestatementRow): StoredRestatement {
  return {
    id: Number(row.id),
    memoryId: Number(row.memory_id),
    text: row.text,
    tags: row.tags,
    sourceProvider: row.source_provider,
    captureMode: row.capture_mode,
    sessionId: row.session_id,
    createdAt: row.created_at,
  };
}

/** The restatements of the subject's memories `memoryIds`, oldest first, grouped by memory id. */
export async function restatementsOf(trx: DbTransaction, spaces: SpaceKeys, memoryIds: readonly number[]): Promise<Map<number, StoredRestatement[]>> {
  const grouped = new Map<number, StoredRestatement[]>();
  if (memoryIds.length === 0) return grouped;
  const { rows } = await sql<RestatementRow>`
    select id, memory_id, text, tags, source_provider, capture_mode, session_id, created_at
      from memory_restatements
     where ${inSpaces('subject', spaces)} and memory_id = any(${[...memoryIds]}::bigint[])
     order by memory_id, created_at, id`.execute(trx);
  for (const row of rows) {
    const restatement = toRestatement(row);
    grouped.set(restatement.memoryId, [...(grouped.get(restatement.memoryId) ?? []), restatement]);
  }
  return grouped;
}

/** One of the subject's restatements; undefined when it has none with that id. */
export async function readRestatement(trx: DbTransaction, subject: string, restatementId: number): Promise<StoredRestatement | undefined> {
  const { rows } = await sql<RestatementRow>`
    select id, memory_id, text, tags, source_provider, capture_mode, session_id, created_at
      from memory_restatements where subject = ${subject} and id = ${restatementId}`.execute(trx);
  return rows[0] === undefined ? undefined : toRestatement(rows[0]);
}

/** Deletes one of the subject's restatements and returns it; undefined when it has none with that id. */
export async function deleteRestatement(trx: DbTransaction, subject: string, restatementId: number): Promise<StoredRestatement | undefined> {
  const { rows } = await sql<RestatementRow>`
    delete from memory_restatements where subject = ${subject} and id = ${restatementId}
    returning id, memory_id, text, tags, source_provider, capture_mode, session_id, created_at`.execute(trx);
  return rows[0] === undefined ? undefined : toRestatement(rows[0]);
}

/**
 * The restatements of the memory in the enclosing statement's `memories` row, oldest first, as the jsonb array a
 * tombstone keeps (RestatementJson): for a DELETE … RETURNING, which still sees them (the cascade runs after it).
 */
export function restatementsJson(memoryId: RawBuilder<unknown>): RawBuilder<RestatementJson[]> {
  return sql<RestatementJson[]>`(
    select coalesce(jsonb_agg(jsonb_build_object(
             'text', text, 'tags', tags, 'source_provider', source_provider, 'capture_mode', capture_mode,
             'session_id', session_id, 'created_at', created_at) order by created_at, id), '[]'::jsonb)
      from memory_restatements where memory_restatements.memory_id = ${memoryId})`;
}

/** A tombstone's restatements column as domain values. */
export function fromRestatementsJson(value: RestatementJson[] | string): Restatement[] {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as RestatementJson[]) : value;
  return parsed.map((item) => ({
    text: item.text,
    tags: item.tags,
    sourceProvider: item.source_provider,
    captureMode: item.capture_mode,
    sessionId: item.session_id,
    createdAt: new Date(item.created_at),
  }));
}

/** Domain restatements as a tombstone's restatements column. */
export function toRestatementsJson(restatements: readonly Restatement[]): string {
  return JSON.stringify(
    restatements.map((item): RestatementJson => ({
      text: item.text,
      tags: [...item.tags],
      source_provider: item.sourceProvider,
      capture_mode: item.captureMode,
      session_id: item.sessionId,
      created_at: item.createdAt.toISOString(),
    })),
  );
}
