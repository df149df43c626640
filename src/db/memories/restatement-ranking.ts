import { sql, type RawBuilder } from 'kysely';
import { vectorParameter, type StoredVector } from '../pgvector.js';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/** A restatement recall found: nearer the question than its memory's own text, or sharing words with it. */
export interface RestatementHit {
  readonly memoryId: number;
  /** Its first `chars` characters. */
  readonly text: string;
  readonly truncated: boolean;
  readonly createdAt: Date;
  /** Cosine distance to the question; undefined for a vector of another model. */
  readonly distance: number | undefined;
  /** Its memory's own distance; undefined for a vector of another model. */
  readonly memoryDistance: number | undefined;
  /** The share of the question's stems it contains (0–1). */
  readonly coverage: number;
}

/** A row of restatementRankingQuery. */
export interface RestatementHitRow {
  id: string | number;
  memory_id: string | number;
  text: string;
  chars: number;
  created_at: Date | string;
  distance: number | null;
  memory_distance: number | null;
  matched: string | number;
  total: string | number;
}

/**
 * The restatements of the subject's live memories that pass the filters and are better evidence for the question
 * than their memory's own text (nearer by vector), at most `depth`, nearest first, and those sharing a stem with
 * `words`, at most `depth`, most stems first: one statement. A subject's restatements are few (one per text
 * remember judged a repeat), so they are read through the (subject, memory_id) index and each is matched with
 * `@@` on its stored search_vector (no GIN index serves `@@` under row-level security; see migration 0004).
 */
export async function restatementRanking(trx: DbTransaction, ...query: Parameters<typeof restatementRankingQuery>): Promise<RestatementHit[]> {
  const { rows } = await prepared(sql<RestatementHitRow>`${restatementRankingQuery(...query)} order by ${RESTATEMENT_RANKING_ORDER}`).execute(trx);
  return rows.map(toRestatementHit);
}

/** restatementRanking's order, over restatementRankingQuery's columns. */
export const RESTATEMENT_RANKING_ORDER = sql`distance nulls last, id desc`;

/** restatementRanking's statement without its order, for one that runs it along with something else (recall-plan.ts). */
export function restatementRankingQuery(
  spaces: SpaceKeys,
  filters: MemoryFilters,
  words: string,
  vector: StoredVector | undefined,
  depth: number,
  chars: number,
): RawBuilder<RestatementHitRow> {
  const sameModel = (table: string) =>
    vector === undefined ? sql`false` : sql`${sql.ref(`${table}.embedding_model`)} = ${vector.model} and ${sql.ref(`${table}.embedding_dimensions`)} = ${sql.lit(vector.dimensions)}`;
  const probe = vector === undefined ? sql`null::vector` : vectorParameter(vector);
  return sql<RestatementHitRow>`
    with probe as materialized (select ${probe} as vector),
    words as materialized (
      select ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery as query
        from unnest(tsvector_to_array(to_tsvector('english', ${words}))) as lexeme),
    scored as materialized (
      select r.id, r.memory_id, left(r.text, ${chars}) as text, length(r.text) as chars, r.created_at,
             case when ${sameModel('r')} then r.embedding <=> probe.vector end as distance,
             own.distance as memory_distance,
             (select count(*) from words where r.search_vector @@ words.query) as matched
        from memory_restatements as r
        cross join probe
        cross join lateral (select case when ${sameModel('memories')} then memories.embedding <=> probe.vector end as distance
                              from memories
                             where memories.id = r.memory_id and ${memoryConditions(spaces, filters)}) as own
       where ${inSpaces('r.subject', spaces)}),
    nearer as (
      select * from scored where distance < coalesce(memory_distance, 2) order by distance, id desc limit ${depth}),
    worded as (
      select * from scored where matched > 0 order by matched desc, distance nulls last, id desc limit ${depth})
    select id, memory_id, text, chars, created_at, distance, memory_distance, matched, (select count(*) from words) as total
      from (select * from nearer union select * from worded) as found`;
}

export function toRestatementHit(row: RestatementHitRow): RestatementHit {
  return {
    memoryId: Number(row.memory_id),
    text: row.text,
    truncated: Number(row.chars) > row.text.length,
    // Through JSON (run alongside another ranking) a time comes back as text.
    createdAt: new Date(row.created_at),
    distance: row.distance === null ? undefined : Number(row.distance),
    memoryDistance: row.memory_distance === null ? undefined : Number(row.memory_distance),
    coverage: Number(row.total) === 0 ? 0 : Number(row.matched) / Number(row.total),
  };
}
