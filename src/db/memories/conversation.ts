import { sql, type RawBuilder } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, notExpired, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * What came next after a memory in its conversation: the next turn, and when that one says little (an
 * acknowledgement, "Wow, that's great!"), the turn after it too, where the conversation's matter usually goes on.
 */
export interface Continuation {
  readonly next: number;
  /** The turn after `next`, when `next` has at most SHORT_TURN_WORDS words and the turn after it passes the filters. */
  readonly after?: number;
}

/**
 * A turn of at most this many words is read past (Continuation's `after`). Chosen on LoCoMo's dev half
 * (conversations 1–5; bench/README.md, "A short turn read past"): of 8, 15 and 25 words counted without the
 * speaker's name ("Caroline:"), 25 lowered a dev cell and 15 gained most without; counted with the name, 16.
 */
export const SHORT_TURN_WORDS = 16;

/**
 * The memory remembered next after `memoryId` in the same conversation (nextTurn), when it passes `filters`, and
 * the one after it when that one is short (Continuation). Undefined when the memory has no session_id, nothing came
 * after it, or what came after is filtered out. Prepared, since recall asks it whenever its planner did not
 * (recall-plan.ts).
 */
export async function continuationOf(trx: DbTransaction, spaces: SpaceKeys, memoryId: number, filters: MemoryFilters): Promise<Continuation | undefined> {
  const { rows } = await prepared(continuationsQuery(spaces, filters, sql`select ${memoryId}::bigint as id`)).execute(trx);
  return toContinuations(rows).get(memoryId) ?? undefined;
}

/** A row of continuationsQuery: an anchor, what came next after it (null: nothing, or filtered out), and after that. */
export interface ContinuationRow {
  anchor: string | number;
  next: string | number | null;
  after: string | number | null;
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

/** continuationOf for each of `anchors` (a query of ids, in a column `id`), a row each. */
export function continuationsQuery(spaces: SpaceKeys, filters: MemoryFilters, anchors: RawBuilder<unknown>): RawBuilder<ContinuationRow> {
  const passes = (alias: string) => sql`exists (select 1 from memories where memories.id = ${sql.ref(`${alias}.id`)} and ${memoryConditions(spaces, filters)})`;
  return sql<ContinuationRow>`
    select asked.id as anchor, turn.next, turn.after
      from (${anchors}) as asked
      left join lateral (
        select later.id as next,
               case when array_length(regexp_split_to_array(btrim(said.text), '\\s+'), 1) <= ${SHORT_TURN_WORDS}
                    then (select beyond.id from ${nextTurn('said')} as beyond where ${passes('beyond')})
               end as after
          from memories anchor
         cross join lateral ${nextTurn('anchor')} as later
          join memories said on said.id = later.id
         where ${inSpaces('anchor.subject', spaces)} and anchor.id = asked.id and ${passes('later')}) as turn on true`;
}

/** continuationsQuery's rows by anchor: what came next, or null when nothing did. */
export function toContinuations(rows: readonly ContinuationRow[]): Map<number, Continuation | null> {
  return new Map(
    rows.map((row) => [Number(row.anchor), row.next === null ? null : { next: Number(row.next), ...(row.after === null ? {} : { after: Number(row.after) }) }]),
  );
}
