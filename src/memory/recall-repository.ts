import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { hasFilters, memoryConditions, notExpired } from './filter-sql.js';
import type { StoredVector } from './repository.js';
import type { MemoryFilters } from './types.js';

/** All SQL of recall. Every function runs inside a subject-scoped transaction. */
type Trx = Transaction<Database>;

/** pgvector's HNSW indexes vectors of at most 2000 dimensions (see ensureVectorIndex). */
const MAX_INDEXED_DIMENSIONS = 2000;

/**
 * The index walk passes about one row in (candidates / table rows); below this share it would read more than
 * depth / share index tuples, and the exact scan of the candidates is the cheaper of two slow options.
 */
const MIN_INDEX_SHARE = 0.01;

export type VectorPlan = 'exact' | 'hnsw';

/** The vector ranking: ids nearest first, each one's cosine similarity to the query, and the plan that found them. */
export interface VectorHits {
  readonly ids: number[];
  readonly similarities: number[];
  readonly plan: VectorPlan;
}

type DistanceRow = { id: string | number; distance: number | string };
const hitsOf = (rows: readonly DistanceRow[], plan: VectorPlan): VectorHits => ({
  ids: rows.map((row) => Number(row.id)),
  similarities: rows.map((row) => 1 - Number(row.distance)),
  plan,
});

export interface VectorPlanOptions {
  /**
   * Up to this many candidate rows (the subject's rows that pass every filter) are ranked by an exact scan;
   * beyond it the HNSW index is walked with an iterative scan.
   */
  readonly exactScanLimit: number;
  /** The subject's number of memories (subjectMemoryCount). */
  readonly subjectMemories: number;
}

/** The subject's number of memories, expired ones included, as kept by triggers (migration 0005). */
export async function subjectMemoryCount(trx: Trx, subject: string): Promise<number> {
  const row = await trx.selectFrom('subject_stats').select('memories').where('subject', '=', subject).executeTakeFirst();
  return Number(row?.memories ?? 0);
}

/**
 * Ids of the subject's live memories that pass the filters, nearest to `vector` first (at most `depth`).
 *
 * A global approximate index knows nothing of subjects or filters: asked for the k nearest rows it returns
 * k rows of the whole table and the filter then keeps the few that are the subject's. So a small candidate
 * set (the usual case: one subject's memories) is ranked exactly, through the subject index; only a large
 * one that is also a fair share of the table uses HNSW, with pgvector's iterative scan so that the index keeps
 * walking until enough rows pass the filters. If even that comes back short, the exact scan answers.
 */
export async function vectorRanking(
  trx: Trx,
  subject: string,
  filters: MemoryFilters,
  vector: StoredVector,
  depth: number,
  options: VectorPlanOptions,
): Promise<VectorHits> {
  const where = vectorConditions(subject, filters, vector);
  const limit = options.exactScanLimit;
  // Without filters the subject's size is the candidate count (but for expired rows and other models' vectors,
  // which the walk's fallback covers): a subject known to be large goes straight to the index.
  const knownLarge = !hasFilters(filters) && options.subjectMemories > limit;
  if (!knownLarge) {
    // One pass ranks up to limit + 1 candidates exactly and counts them: for every subject in normal use that is
    // the answer. Ordering by the bare column (not the indexed `embedding::vector(N)` expression) keeps the
    // planner off the approximate index, so the ranking is exact by construction.
    const { rows } = await sql<DistanceRow & { candidates: string | number }>`
      select id, distance, candidates from (
        select id, distance, count(*) over () as candidates from (
          select id, embedding <=> ${vector.literal}::vector as distance from memories where ${where} limit ${limit + 1}
        ) as capped
      ) as counted
       order by distance, id desc
       limit ${depth}`.execute(trx);
    if (rows.length === 0 || Number(rows[0]!.candidates) <= limit) return hitsOf(rows, 'exact');
  }

  const candidates = knownLarge ? options.subjectMemories : limit + 1;
  if (vector.dimensions <= MAX_INDEXED_DIMENSIONS && (await shareOfTable(trx, candidates)) >= MIN_INDEX_SHARE) {
    const rows = await hnswScan(trx, where, vector, depth);
    if (rows.length >= depth) return hitsOf(rows, 'hnsw');
  }
  const { rows: all } = await sql<DistanceRow>`
    select id, embedding <=> ${vector.literal}::vector as distance from memories where ${where}
     order by distance, id desc
     limit ${depth}`.execute(trx);
  return hitsOf(all, 'exact');
}

/**
 * The candidate rows of the vector ranking: the filters, plus vectors of the query's own model. The dimension
 * is a literal so the planner can match the partial index's `embedding_dimensions = N` predicate.
 */
export function vectorConditions(subject: string, filters: MemoryFilters, vector: StoredVector): RawBuilder<unknown> {
  return sql`${memoryConditions(subject, filters)}
    and embedding_model = ${vector.model} and embedding_dimensions = ${sql.lit(vector.dimensions)}`;
}

/** candidates / the table's estimated rows (1 when never analysed, as PGlite without autovacuum may be). */
async function shareOfTable(trx: Trx, candidates: number): Promise<number> {
  const { rows } = await sql<{ estimate: number | null }>`
    select reltuples::float8 as estimate from pg_class where oid = to_regclass('memories')`.execute(trx);
  const estimate = Number(rows[0]?.estimate ?? -1);
  return estimate > 0 ? Math.min(1, candidates / estimate) : 1;
}

async function hnswScan(trx: Trx, where: RawBuilder<unknown>, vector: StoredVector, depth: number): Promise<DistanceRow[]> {
  const { rows: before } = await sql<{ sort: string; jit: string }>`
    select current_setting('enable_sort') as sort, current_setting('jit') as jit`.execute(trx);
  await configureIterativeScan(trx, depth);
  const { rows } = await hnswQuery(where, vector, depth).execute(trx);
  // The rest of the transaction (full-text ranking) plans as usual.
  await sql`select set_config('enable_sort', ${before[0]?.sort ?? 'on'}, true), set_config('jit', ${before[0]?.jit ?? 'on'}, true)`.execute(trx);
  return rows;
}

/**
 * Transaction-local settings for the index walk: relaxed_order keeps walking the graph until `depth` rows pass
 * the filters (or the tuple budget runs out), and hnswQuery's outer ORDER BY restores exact distance order among
 * what was found. Sorting is discouraged because the count has already shown the candidate set is too large to
 * sort; the planner's own row estimates know nothing of one subject's share under these filters. That makes
 * the plan's cost look huge, which must not trigger JIT compilation (measured: 300 ms for a 17 ms query).
 */
export async function configureIterativeScan(trx: Trx, depth: number): Promise<void> {
  await sql`select set_config('hnsw.iterative_scan', 'relaxed_order', true),
                   set_config('hnsw.ef_search', ${String(Math.min(1000, Math.max(100, depth * 2)))}, true),
                   set_config('hnsw.max_scan_tuples', '100000', true),
                   set_config('enable_sort', 'off', true),
                   set_config('jit', 'off', true)`.execute(trx);
}

/** Reaches the per-dimension partial HNSW index: same expression, same `embedding_dimensions = N` predicate. */
export function hnswQuery(where: RawBuilder<unknown>, vector: StoredVector, depth: number): RawBuilder<DistanceRow> {
  const dims = sql.raw(String(vector.dimensions));
  return sql<DistanceRow>`
    with nearest as materialized (
      select id, embedding::vector(${dims}) <=> ${vector.literal}::vector(${dims}) as distance
        from memories
       where ${where}
       order by embedding::vector(${dims}) <=> ${vector.literal}::vector(${dims})
       limit ${depth})
    select id, distance from nearest order by distance, id desc`;
}

/**
 * A query word found in this many of the subject's memories or more is too common to pick candidates: it still
 * adds to the score of memories found through rarer words, but finds none by itself. This bounds the scoring
 * (about this many rows per query word) for a subject with very many memories; below this many nothing changes.
 */
const COMMON_TERM_ROWS = 1000;

/** A memory found by the full-text ranking. */
export interface TextHit {
  readonly id: number;
  /** Sum over the query's stems it contains of idf × ts_rank. */
  readonly score: number;
  /**
   * The share of the query's idf mass that it contains (0–1): the idf of its matching stems over the idf of all
   * the query's stems, those found in none of the subject's memories counting at the highest idf. One ordinary
   * word of a longer question covers little; every rare word of the question covers nearly all.
   */
  readonly coverage: number;
}

/**
 * The subject's live memories that pass the filters and share a word stem with `query`, best first.
 *
 * Every stem of the query is an alternative (OR), so a question need not repeat a memory's wording; each
 * matching stem counts by its term frequency (ts_rank) weighted by its inverse document frequency among the
 * subject's memories (BM25's idf, with `subjectMemories` as the document count), so a rare name or number
 * outweighs a word that every memory contains.
 *
 * Stems are looked up in memory_terms (migration 0004), whose B-tree PostgreSQL can use under row-level
 * security, unlike the GIN index for `@@`; the candidates are then read by primary key, filtered and scored.
 */
export async function textRanking(
  trx: Trx,
  subject: string,
  filters: MemoryFilters,
  query: string,
  depth: number,
  subjectMemories: number,
): Promise<TextHit[]> {
  // Lexemes are quoted into tsquery's input syntax, so punctuation in identifiers cannot be read as operators.
  const { rows } = await sql<{ id: string | number; score: number; coverage: number }>`
    with terms as materialized (
      select lexeme,
             ('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery as query
        from unnest(tsvector_to_array(to_tsvector('english', ${query}))) as lexeme),
    frequencies as materialized (
      select terms.lexeme, terms.query,
             (select count(*) from (select 1 from memory_terms
                                     where memory_terms.subject = ${subject} and memory_terms.lexeme = terms.lexeme
                                     limit ${COMMON_TERM_ROWS}) as capped)::float8 as df
        from terms),
    weights as materialized (
      select query, df, ln(1 + (greatest(${subjectMemories}::float8, df) - df + 0.5) / (df + 0.5)) as idf
        from frequencies),
    candidates as materialized (
      select distinct memory_terms.memory_id as id
        from frequencies
        join memory_terms on memory_terms.subject = ${subject} and memory_terms.lexeme = frequencies.lexeme
       where frequencies.df < ${COMMON_TERM_ROWS})
    select memories.id,
           (select sum(weights.idf * ts_rank(memories.search_vector, weights.query)) from weights where weights.df > 0) as score,
           (select sum(weights.idf) filter (where memories.search_vector @@ weights.query) / nullif(sum(weights.idf), 0)
              from weights) as coverage
      from candidates join memories on memories.id = candidates.id
     where ${memoryConditions(subject, filters)}
     order by score desc, memories.id desc
     limit ${depth}`.execute(trx);
  return rows.map((row) => ({ id: Number(row.id), score: Number(row.score), coverage: Number(row.coverage ?? 0) }));
}

export interface MemoryRow {
  readonly id: number;
  /** At most `maxChars` characters of the text. */
  readonly text: string;
  readonly textChars: number;
  readonly tags: string[];
  readonly importance: number;
  readonly captureMode: 'explicit' | 'inferred' | null;
  readonly sourceProvider: string | null;
  readonly sessionId: string | null;
  readonly createdAt: Date;
  readonly lastConfirmedAt: Date;
  readonly expiresAt: Date | null;
}

interface RawMemoryRow {
  id: string | number;
  text: string;
  text_chars: number;
  tags: string[];
  importance: number;
  capture_mode: 'explicit' | 'inferred' | null;
  source_provider: string | null;
  session_id: string | null;
  created_at: Date;
  last_confirmed_at: Date;
  expires_at: Date | null;
}

/** The columns a memory is shown with; the text cut to `maxChars` in SQL so a huge text never travels. */
export const memoryColumns = (maxChars: number) => sql`
  id, left(text, ${maxChars}) as text, char_length(text) as text_chars, tags, importance, capture_mode,
  source_provider, session_id, created_at, last_confirmed_at, expires_at`;

export function toMemoryRow(row: RawMemoryRow): MemoryRow {
  return {
    id: Number(row.id),
    text: row.text,
    textChars: Number(row.text_chars),
    tags: row.tags,
    importance: Number(row.importance),
    captureMode: row.capture_mode,
    sourceProvider: row.source_provider,
    sessionId: row.session_id,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
    expiresAt: row.expires_at,
  };
}

/** The subject's live memories with the given ids, in no particular order. */
export async function fetchMemories(trx: Trx, subject: string, ids: readonly number[], maxChars: number): Promise<MemoryRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<RawMemoryRow>`
    select ${memoryColumns(maxChars)} from memories
     where subject = ${subject} and id = any(${ids.map(String)}::bigint[]) and ${notExpired}`.execute(trx);
  return rows.map(toMemoryRow);
}
