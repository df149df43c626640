import { sql } from 'kysely';
import type { DbTransaction } from '../schema.js';
import { inSpaces, notExpired, type SpaceKeys } from './filters.js';
import { memoryColumns, toMemoryRecord, type MemoryRow } from './read-memories.js';
import type { MemoryRecord } from './records.js';

export interface BriefCandidate extends MemoryRecord {
  /** How many recalls returned it. */
  readonly recalls: number;
}

/**
 * The candidates for a brief: the subject's `perList` most recently confirmed (or corrected: a correction is a new
 * memory) live memories, its `perList` most important and its `perList` most recalled, each list read from an index.
 */
export async function briefCandidates(trx: DbTransaction, spaces: SpaceKeys, perList: number, maxChars: number): Promise<BriefCandidate[]> {
  const { rows } = await sql<MemoryRow & { recalls: number | null }>`
    with picked as (
      (select id from memories where ${inSpaces('subject', spaces)} and ${notExpired}
        order by last_confirmed_at desc, id desc limit ${perList})
      union
      (select id from memories where ${inSpaces('subject', spaces)} and ${notExpired}
        order by importance desc, last_confirmed_at desc, id desc limit ${perList})
      union
      (select memory_id from memory_recalls where ${inSpaces('subject', spaces)}
        order by recalls desc, memory_id desc limit ${perList})
    )
    select ${memoryColumns(maxChars)},
           (select recalls from memory_recalls where memory_recalls.memory_id = memories.id) as recalls
      from memories
     where ${inSpaces('subject', spaces)} and id in (select id from picked) and ${notExpired}`.execute(trx);
  return rows.map((row) => ({ ...toMemoryRecord(row), recalls: Number(row.recalls ?? 0) }));
}

/** Adds each memory's recalls (by id) to its count: those still stored, of the spaces the transaction may read. */
export async function recordRecalls(trx: DbTransaction, counts: ReadonlyMap<number, number>): Promise<void> {
  if (counts.size === 0) return;
  await sql`
    insert into memory_recalls (memory_id, subject, recalls)
      select memories.id, memories.subject, counted.recalls
        from unnest(${[...counts.keys()].map(String)}::bigint[], ${[...counts.values()]}::integer[]) as counted(id, recalls)
        join memories on memories.id = counted.id
      on conflict (memory_id) do update set recalls = memory_recalls.recalls + excluded.recalls, last_recalled_at = now()`.execute(trx);
}
