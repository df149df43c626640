import { sql } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, notExpired, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * The memory remembered next after `memoryId` in the same conversation: the subject's first later memory (by
 * creation, then id) with the same session_id, when it passes `filters`. Undefined when the memory has no
 * session_id, nothing came after it, or what came after is filtered out. Served by the (subject, created_at, id)
 * index from the memory's own position; prepared, since every hybrid recall asks it.
 */
export async function nextInConversation(trx: DbTransaction, spaces: SpaceKeys, memoryId: number, filters: MemoryFilters): Promise<number | undefined> {
  const { rows } = await prepared(sql<{ id: string | number }>`
    select id from memories
     where id = (select later.id
                   from memories anchor
                  cross join lateral (
                        select id from memories
                         where ${inSpaces('subject', spaces)} and session_id = anchor.session_id and ${notExpired}
                           and (created_at, id) > (anchor.created_at, anchor.id)
                         order by created_at, id
                         limit 1) as later
                  where ${inSpaces('anchor.subject', spaces)} and anchor.id = ${memoryId} and anchor.session_id is not null)
       and ${memoryConditions(spaces, filters)}`).execute(trx);
  return rows[0] === undefined ? undefined : Number(rows[0].id);
}
