import { sql, type RawBuilder } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, notExpired, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * The memory remembered next after `memoryId` in the same conversation (nextTurn), when it passes `filters`.
 * Undefined when the memory has no session_id, nothing came after it, or what came after is filtered out.
 * Prepared, since recall asks it whenever its planner did not (recall-plan.ts).
 */
export async function nextInConversation(trx: DbTransaction, spaces: SpaceKeys, memoryId: number, filters: MemoryFilters): Promise<number | undefined> {
  const { rows } = await prepared(continuationsQuery(spaces, filters, sql`select ${memoryId}::bigint as id`)).execute(trx);
  return toContinuations(rows).get(memoryId) ?? undefined;
}

/** A row of continuationsQuery: an anchor, and what came next after it (null: nothing, or filtered out). */
export interface ContinuationRow {
  anchor: string | number;
  next: string | number | null;
}

/**
 * The turn after the memory `anchor` (a table alias) in its conversation, as a subquery for a lateral join: the
 * first later live memory (by creation, then id) of the same subject with the same session_id, with its vector.
 * None for a memory in no conversation. One probe of the (subject, session_id, created_at, id) index.
 */
export function nextTurn(anchor: string): RawBuilder<{ id: string | number; embedding: string; embedding_model: string; embedding_dimensions: number }> {
  const of = (column: string) => sql.ref(`${anchor}.${column}`);
  return sql`(
    select id, embedding, embedding_model, embedding_dimensions from memories
     where subject = ${of('subject')} and session_id = ${of('session_id')} and ${notExpired}
       and (created_at, id) > (${of('created_at')}, ${of('id')})
     order by created_at, id
     limit 1)`;
}

/** nextInConversation for each of `anchors` (a query of ids, in a column `id`), a row each. */
export function continuationsQuery(spaces: SpaceKeys, filters: MemoryFilters, anchors: RawBuilder<unknown>): RawBuilder<ContinuationRow> {
  return sql<ContinuationRow>`
    select asked.id as anchor,
           (select later.id
              from memories anchor
             cross join lateral ${nextTurn('anchor')} as later
             where ${inSpaces('anchor.subject', spaces)} and anchor.id = asked.id
               and exists (select 1 from memories where memories.id = later.id and ${memoryConditions(spaces, filters)})) as next
      from (${anchors}) as asked`;
}

/** continuationsQuery's rows by anchor: the next id, or null when nothing came next. */
export function toContinuations(rows: readonly ContinuationRow[]): Map<number, number | null> {
  return new Map(rows.map((row) => [Number(row.anchor), row.next === null ? null : Number(row.next)]));
}
