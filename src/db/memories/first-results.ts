import { sql } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { notExpired, type SpaceKeys, inSpaces } from './filters.js';

/** One of recall's first results with what arranging them needs (recall-time.ts, recall-coverage.ts). */
export interface FirstResult {
  readonly id: number;
  /** At most the `maxChars` asked for. */
  readonly text: string;
  readonly createdAt: Date;
  readonly lastConfirmedAt: Date;
  /** Cosine similarity to each of the ids asked for, in their order; null for a vector of another model or an id not found. */
  readonly similarities: readonly (number | null)[];
}

/**
 * The subject's live memories among `ids`, in no particular order, each with its whole-text vector's similarity
 * to every other of them: one statement, whatever the count. Vectors of another model (a re-embedding under way)
 * are not compared.
 */
export async function readFirstResults(trx: DbTransaction, spaces: SpaceKeys, ids: readonly number[], maxChars: number): Promise<FirstResult[]> {
  if (ids.length === 0) return [];
  const wanted = ids.map(String);
  const { rows } = await prepared(sql<{ id: string | number; text: string; created_at: Date; last_confirmed_at: Date; similarities: (number | string | null)[] }>`
    select a.id, left(a.text, ${maxChars}) as text, a.created_at, a.last_confirmed_at,
           array(select case when b.embedding_model = a.embedding_model and b.embedding_dimensions = a.embedding_dimensions
                             then 1 - (a.embedding <=> b.embedding) end
                   from unnest(${wanted}::bigint[]) with ordinality as other(id, position)
                   left join memories b on ${inSpaces('b.subject', spaces)} and b.id = other.id
                  order by other.position) as similarities
      from memories a
     where ${inSpaces('a.subject', spaces)} and a.id = any(${wanted}::bigint[]) and ${notExpired}`).execute(trx);
  return rows.map((row) => ({
    id: Number(row.id),
    text: row.text,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
    similarities: row.similarities.map((value) => (value === null ? null : Number(value))),
  }));
}
