import { sql } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { notExpired, type SpaceKeys, inSpaces } from './filters.js';
import { memoryColumns, toMemoryRecord, type MemoryRow } from './read-memories.js';
import type { MemoryRecord } from './records.js';
import { TEXT_RANKING_ORDER, toTextHit, type TextHit, type TextHitRow, type TextRankingStatement } from './text-ranking.js';

/** One of recall's first results: the memory as recall shows it, and what arranging the first results needs. */
export interface FirstResult {
  readonly record: MemoryRecord;
  /** Its first `arrangeChars` characters (recall-time.ts reads time words in them). */
  readonly arrangeText: string;
  /** Cosine similarity to each of the read's `compared` ids, in their order (null for a vector of another model or an id not found); empty for an id not compared. */
  readonly similarities: readonly (number | null)[];
}

/**
 * A full-text ranking run in the same statement as the results (the bridge's: recall-ranking.ts), whose first hits
 * are read with them: their records (`read` of them) and, for the first `compared`, their similarities.
 */
export interface ResultsSearch {
  readonly ranking: TextRankingStatement;
  readonly read: number;
  readonly compared: number;
}

export interface FirstResultsRead {
  readonly results: FirstResult[];
  /** The ids each result's similarities are to, in order: those asked, then the search's first hits not among them. */
  readonly compared: readonly number[];
  /** Every id whose record was asked for (a live one among them is in `results`). */
  readonly asked: ReadonlySet<number>;
  /** The search's hits, best first; undefined without a search, or when no result came back to carry them. */
  readonly hits: TextHit[] | undefined;
}

/**
 * The subject's live memories among `ids`, in no particular order, as recall shows them (text cut to `maxChars`),
 * and, for those among `compared` (a prefix of `ids`), their whole-text vector's similarity to each of `compared`:
 * one statement for the results and their arrangement. With a `search`, the same statement runs it and reads its
 * first hits too, so that a ranking that needs them adds no round trip. Vectors of another model (a re-embedding
 * under way) are not compared.
 */
export async function readFirstResults(
  trx: DbTransaction,
  spaces: SpaceKeys,
  ids: readonly number[],
  compared: readonly number[],
  texts: { readonly maxChars: number; readonly arrangeChars: number },
  search?: ResultsSearch,
): Promise<FirstResultsRead> {
  if (ids.length === 0 && search === undefined) return { results: [], compared: [], asked: new Set(), hits: undefined };
  const wanted = compared.map(String);
  const { rows } = await prepared(sql<MemoryRow & { arrange_text: string; similarities: (number | string | null)[]; compared_ids: (number | string)[]; hits: TextHitRow[] | null }>`
    with hits as materialized (${search?.ranking ?? sql`select null::bigint as id, 0::float8 as score, 0::float8 as coverage where false`}),
    first_hits as materialized (
      select id, row_number() over (order by ${TEXT_RANKING_ORDER}) as place from hits order by ${TEXT_RANKING_ORDER} limit ${search?.read ?? 0}),
    compared as materialized (
      select coalesce(array_agg(listed.id order by listed.position), '{}') as ids
        from (select other.id, other.position from unnest(${wanted}::bigint[]) with ordinality as other(id, position)
              union all
              select first_hits.id, ${wanted.length}::bigint + first_hits.place from first_hits
               where first_hits.place <= ${search?.compared ?? 0}::bigint and first_hits.id <> all(${wanted}::bigint[])) as listed),
    -- One array, so that the rows are found by the primary key (an OR of two conditions would scan the subject).
    asked as materialized (
      select array(select unnest(${ids.map(String)}::bigint[]) union select id from first_hits) as ids)
    select ${memoryColumns(texts.maxChars)}, left(a.text, ${texts.arrangeChars}) as arrange_text,
           array(select case when b.embedding_model = a.embedding_model and b.embedding_dimensions = a.embedding_dimensions
                             then 1 - (a.embedding <=> b.embedding) end
                   from unnest((select ids from compared)) with ordinality as other(id, position)
                   left join memories b on ${inSpaces('b.subject', spaces)} and b.id = other.id
                  where a.id = any((select ids from compared)::bigint[])
                  order by other.position) as similarities,
           (select ids from compared) as compared_ids,
           case when row_number() over () = 1
                then (select coalesce(json_agg(json_build_object('id', id, 'score', score, 'coverage', coverage) order by ${TEXT_RANKING_ORDER}), '[]') from hits) end as hits
      from memories a
     where ${inSpaces('a.subject', spaces)} and a.id = any((select ids from asked)::bigint[]) and ${notExpired}`).execute(trx);
  const carrier = rows.find((row) => row.hits !== null);
  const comparedIds = rows[0] === undefined ? [...compared] : rows[0].compared_ids.map(Number);
  return {
    results: rows.map((row) => ({
      record: toMemoryRecord(row),
      arrangeText: row.arrange_text,
      similarities: row.similarities.map((value) => (value === null ? null : Number(value))),
    })),
    compared: comparedIds,
    // The compared ids are among these: a prefix of `ids`, then first hits.
    asked: new Set([...ids, ...(carrier?.hits ?? []).slice(0, search?.read ?? 0).map((hit) => Number(hit.id))]),
    hits: search === undefined || carrier === undefined ? undefined : carrier.hits!.map(toTextHit),
  };
}
