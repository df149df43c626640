import { sql } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { notExpired, type SpaceKeys, inSpaces } from './filters.js';
import { memoryColumns, toMemoryRecord, type MemoryRow } from './read-memories.js';
import type { MemoryRecord } from './records.js';

/** One of recall's first results: the memory as recall shows it, and what arranging the first results needs. */
export interface FirstResult {
  readonly record: MemoryRecord;
  /** Its first `arrangeChars` characters (recall-time.ts reads time words in them). */
  readonly arrangeText: string;
  /** Cosine similarity to each of the `compared` ids, in their order (null for a vector of another model or an id not found); empty for an id not compared. */
  readonly similarities: readonly (number | null)[];
}

/**
 * The subject's live memories among `ids`, in no particular order, as recall shows them (text cut to `maxChars`),
 * and, for those among `compared` (a prefix of `ids`), their whole-text vector's similarity to each of `compared`:
 * one statement for the results and their arrangement. Vectors of another model (a re-embedding under way) are not
 * compared.
 */
export async function readFirstResults(
  trx: DbTransaction,
  spaces: SpaceKeys,
  ids: readonly number[],
  compared: readonly number[],
  texts: { readonly maxChars: number; readonly arrangeChars: number },
): Promise<FirstResult[]> {
  if (ids.length === 0) return [];
  const wanted = compared.map(String);
  const { rows } = await prepared(sql<MemoryRow & { arrange_text: string; similarities: (number | string | null)[] }>`
    select ${memoryColumns(texts.maxChars)}, left(a.text, ${texts.arrangeChars}) as arrange_text,
           array(select case when b.embedding_model = a.embedding_model and b.embedding_dimensions = a.embedding_dimensions
                             then 1 - (a.embedding <=> b.embedding) end
                   from unnest(${wanted}::bigint[]) with ordinality as other(id, position)
                   left join memories b on ${inSpaces('b.subject', spaces)} and b.id = other.id
                  where a.id = any(${wanted}::bigint[])
                  order by other.position) as similarities
      from memories a
     where ${inSpaces('a.subject', spaces)} and a.id = any(${ids.map(String)}::bigint[]) and ${notExpired}`).execute(trx);
  return rows.map((row) => ({
    record: toMemoryRecord(row),
    arrangeText: row.arrange_text,
    similarities: row.similarities.map((value) => (value === null ? null : Number(value))),
  }));
}
