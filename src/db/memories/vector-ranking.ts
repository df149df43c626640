import { sql, type RawBuilder } from 'kysely';
import { indexedCosineDistance, isIndexable, vectorParameter, type StoredVector } from '../pgvector.js';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { nextTurn } from './conversation.js';
import { hasFilters, memoryConditions, NO_FILTERS, type SpaceKeys } from './filters.js';
import type { MemoryFilters } from './records.js';
import { subjectSizeQuery, toSubjectSize, type SubjectSize, type SubjectSizeRow } from './subject-stats.js';

/**
 * The index walk passes about one row in (candidates / table rows); below this share it would read more than
 * depth / share index tuples, and the exact scan of the candidates is the cheaper of two slow options.
 */
const MIN_INDEX_SHARE = 0.01;
/**
 * A counted candidate set of n rows (up to twice ExactScanLimit) in a table of N is still ranked exactly while
 * n² < WALK_BREAK_EVEN × N. The walk reads about depth / (n / N) tuples, the exact scan n rows: at 100k rows the
 * exact scan of 6,000 candidates took 19.4 ms where the walk took 41.5 ms (three spaces of 2,000,
 * bench/spaces.ts), and the walk of a 100k subject 3.7 ms against 55 ms: break-even near 8,800 of 100k; this puts
 * it at 7,000 (√(490 × N)).
 */
const WALK_BREAK_EVEN = 490;
const COUNTED_EXACT_FACTOR = 2;

export type VectorPlan = 'exact' | 'hnsw';

export interface VectorPlanOptions {
  /**
   * Up to this many candidate rows (the subject's rows that pass every filter) are ranked by an exact scan;
   * beyond it the HNSW index is walked with an iterative scan.
   */
  readonly exactScanLimit: number;
  /** The subject's number of memories and the table's estimated rows (subjectSize or sizeForVectorRanking). */
  readonly size: SubjectSize | RankingSize;
  /**
   * How wide the index walk searches (hnsw.ef_search), at least; by default twice the depth. A walk for a few
   * rows that must not miss the nearest one (remember's near-duplicates) searches wider than it returns.
   */
  readonly efSearch?: number;
  /**
   * Rank as recall does: by each passage of a memory of several too, and, for a subject with memories in
   * conversations, a turn read with the one before it (withTurnsRead). Without it, the whole texts alone
   * (remember's near-duplicates, which judge whole facts).
   */
  readonly recall?: boolean;
}

/**
 * How much of a memory of several passages' distance is its whole text's; the rest is its nearest passage's.
 * Measured on LoCoMo turns with the local model (bench/README.md, "Passages"): the nearest passage alone or
 * mostly ranks best, and a little of the whole keeps a passage that matches out of context from winning.
 */
const WHOLE_SHARE = 0.3;

/**
 * The distance recall ranks by, from `vector` (an expression: the query's vector, named once in the statement)
 * to a memory: its whole text's cosine distance, or for a memory of several passages a mix of that and its nearest
 * passage's, so that a question about one sentence of a paragraph finds the paragraph. `whole` is the whole
 * text's distance when the statement has it already (an index walk's), else computed here.
 */
function passageAwareDistance(vector: RawBuilder<string>, whole: RawBuilder<number> = sql<number>`embedding <=> ${vector}`): RawBuilder<number> {
  // Whether a memory has passages is told from the array's stored size, which PostgreSQL knows without reading
  // the array out of TOAST: asking its cardinality read it a second time (+17 % on a LoCoMo subject's exact scan),
  // and taking the nearest of no passages costs a one-sentence memory a subquery (+19 % on the observations';
  // bench/passage-scan.ts). An empty array takes at most 16 bytes; one passage of even one dimension, 33.
  return sql<number>`case when pg_column_size(passage_embeddings) > 16
      then ${sql.lit(WHOLE_SHARE)} * (${whole}) + ${sql.lit(1 - WHOLE_SHARE)} * (select min(passage <=> ${vector}) from unnest(passage_embeddings) as passage)
      else ${whole} end`;
}

/**
 * How much nearer a turn read with the one before it must come than the turn alone to count by it (a cosine
 * distance). Chosen on LoCoMo's dev half (bench/README.md, "A turn read with the one before it"): from 0 to 0.015
 * a neighbour of the right turn, read with it, took a temporal or open-domain question's place; 0.03 lowered no
 * cell of that half.
 */
const CONTEXT_MARGIN = 0.03;

/**
 * Recall's vector ranking from `ranked` (a CTE of rows id, distance: the memories nearest by their own vectors and
 * passages, at most `depth`): each of them is also read with the turn after it in its conversation (nextTurn: the
 * reply to it, or what goes on from it: "Melanie: What did you paint?" then "Caroline: A lake at sunrise."), by the
 * direction of their two whole vectors' sum; the later memory, when it passes `where`, ranks at the better of its
 * own distance and the pair's plus CONTEXT_MARGIN. A reply that shares nothing with a question about what it
 * answers is found by the question it answers; the margin keeps a turn from passing its neighbour on the
 * neighbour's words alone. Only the ranked memories' next turns are looked at: one index probe each, whatever the
 * subject's size. `vector` is the query's vector (an expression). The best `depth`, best first.
 */
function withTurnsRead(ranked: string, where: RawBuilder<unknown>, vector: RawBuilder<string>, depth: number): RawBuilder<{ id: string | number; distance: number }> {
  const own = sql.table(ranked);
  return sql<{ id: string | number; distance: number }>`
    select id, min(distance) as distance from (
      select id, distance from ${own}
      union all
      select later.id, ((asked.embedding + later.embedding) <=> ${vector}) + ${sql.lit(CONTEXT_MARGIN)} as distance
        from ${own} as first
        join memories asked on asked.id = first.id
       cross join lateral ${nextTurn('asked')} as later
       where later.embedding_model = asked.embedding_model and later.embedding_dimensions = asked.embedding_dimensions
         and exists (select 1 from memories where memories.id = later.id and ${where})
    ) as found
     group by id
     order by distance, id desc
     limit ${depth}`;
}

/**
 * What a vector ranking reads of each memory: its whole text's vector (remember's near-duplicates), its passages
 * too, or its passages and the turn it follows in a conversation (recall, for a subject with conversations).
 */
export type Reading = 'whole' | 'passages' | 'passages and turns';

/** How recall reads a subject's memories, given how many of them are in conversations. */
export const recallReading = (inConversations: number): Reading => (inConversations > 0 ? 'passages and turns' : 'passages');

/** The distance from a statement's `probe` (the query's vector, in a CTE of that name) to each row it scans. */
function probeDistance(reading: Reading): RawBuilder<number> {
  return reading === 'whole' ? sql<number>`embedding <=> probe.vector` : passageAwareDistance(sql`probe.vector`);
}

/** The ranking read from `ranked` (a CTE of rows id, distance, best first): with the turns after them when `reading` says. */
function rankedAsRead(ranked: string, reading: Reading, where: RawBuilder<unknown>, vector: RawBuilder<string>, depth: number): RawBuilder<{ id: string | number; distance: number }> {
  return reading === 'passages and turns' ? withTurnsRead(ranked, where, vector, depth) : sql`select id, distance from ${sql.table(ranked)} order by distance, id desc`;
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
export async function vectorRanking<A extends AlongsideQueries = []>(
  trx: DbTransaction,
  spaces: SpaceKeys,
  filters: MemoryFilters,
  vector: StoredVector,
  depth: number,
  options: VectorPlanOptions,
  alongside?: A,
): Promise<{ ids: number[]; plan: VectorPlan; alongside: AlongsideRows<A> | undefined }> {
  const where = vectorConditions(spaces, filters, vector);
  const limit = options.exactScanLimit;
  const reading = options.recall === true ? recallReading(options.size.inConversations) : 'whole';
  // Without filters the subject's size is the candidate count (but for expired rows and other models' vectors,
  // which the walk's fallback covers): a subject known to be large goes straight to the index.
  const knownLarge = !hasFilters(filters) && options.size.memories > limit;
  let found: AlongsideRows<A> | undefined;
  if (!knownLarge) {
    // One pass ranks up to limit + 1 candidates exactly and counts them: for every subject in normal use that is
    // the answer. Ordering by the bare column (not the indexed `embedding::vector(N)` expression) keeps the
    // planner off the approximate index, so the ranking is exact by construction. `alongside` rides in the same
    // statement, so for such a subject both rankings take one round trip.
    const distance = probeDistance(reading);
    const { rows } = await prepared(sql<{ ids: (string | number)[]; candidates: string | number | null; alongside: AlongsideRows<A> | null }>`
      with probe as materialized (select ${vectorParameter(vector)} as vector),
      own_ranked as materialized (
        select id, distance, count(*) over () as candidates from (
          select id, ${distance} as distance from memories, probe where ${where} limit ${limit + 1}
        ) as capped
         order by distance, id desc
         limit ${depth}),
      vector_ranked as materialized (${rankedAsRead('own_ranked', reading, where, sql`(select vector from probe)`, depth)})
      ${alongside === undefined ? sql`` : alongsideQueries(alongside)}
      select (select coalesce(json_agg(id order by distance, id desc), '[]') from vector_ranked) as ids,
             (select max(candidates) from own_ranked) as candidates,
             ${alongside === undefined ? sql`null` : alongsideRows(alongside)} as alongside`).execute(trx);
    const row = rows[0];
    found = row?.alongside ?? undefined;
    if (Number(row?.candidates ?? 0) <= limit) return { ids: (row?.ids ?? []).map(Number), plan: 'exact', alongside: found };
  }

  const candidates = knownLarge ? options.size.memories : limit + 1;
  // Applied with the size when it showed the subject this large; restored by whichever statement ranks next.
  const applied = knownLarge && 'walkSettings' in options.size ? options.size.walkSettings : undefined;
  if (walksIndex(vector, candidates, options.size, knownLarge ? limit : undefined)) {
    const before = applied ?? (await configureIterativeScan(trx, options.efSearch ?? depth * 2));
    const { rows } = await prepared(hnswQuery(where, vector, depth, before, reading)).execute(trx);
    if (rows.length >= depth) return { ids: rows.map((row) => Number(row.id)), plan: 'hnsw', alongside: found };
  }
  return { ids: await exactRanking(trx, where, vector, depth, reading, applied), plan: 'exact', alongside: found };
}

/**
 * A query run in the vector ranking's first statement (vectorRanking, walkIndexWith), with its rows' order. It may
 * read the ranking's rows (id, distance) as `vector_ranked` (VECTOR_RANKED) and the queries before it as
 * `alongside_0`, `alongside_1`, ….
 */
export interface Alongside<T> {
  readonly query: RawBuilder<T>;
  readonly order: RawBuilder<unknown>;
}

/** The vector ranking's rows in its statement, for the queries run alongside (Alongside). */
export const VECTOR_RANKED = sql`vector_ranked`;

/** The rows of the `index`th query run alongside, in the statement, for the queries after it (Alongside). */
export function alongsideRanked(index: number): RawBuilder<unknown> {
  return sql.id(`alongside_${index}`);
}

/** Queries run alongside, each in a CTE of its own; their rows come back in the same positions (AlongsideRows). */
export type AlongsideQueries = readonly Alongside<unknown>[];
export type AlongsideRows<A extends AlongsideQueries> = { -readonly [K in keyof A]: A[K] extends Alongside<infer T> ? T[] : never };

/** The CTEs of `alongside`'s queries (alongside_0, alongside_1, …), each written after a comma. */
function alongsideQueries(alongside: AlongsideQueries): RawBuilder<unknown> {
  return sql.join(
    alongside.map((query, index) => sql`, ${alongsideRanked(index)} as materialized (${query.query})`),
    sql``,
  );
}

/** The rows of each of the statement's alongside CTEs as a JSON array, in their order, in one JSON array. */
function alongsideRows(alongside: AlongsideQueries): RawBuilder<unknown> {
  const each = alongside.map((query, index) => sql`(select coalesce(json_agg(found order by ${query.order}), '[]') from ${alongsideRanked(index)} as found)`);
  return sql`json_build_array(${sql.join(each)})`;
}

/**
 * The candidates (`where`) nearest to `vector` first, by an exact scan, read as `reading` says;
 * `restore` puts the walk's settings back.
 */
async function exactRanking(
  trx: DbTransaction,
  where: RawBuilder<unknown>,
  vector: StoredVector,
  depth: number,
  reading: Reading,
  restore?: PlannerSettings,
): Promise<number[]> {
  const { rows } = await prepared(exactRankingQuery(where, vector, depth, reading, restore)).execute(trx);
  return rows.map((row) => Number(row.id));
}

/** exactRanking's statement (exported for bench/passage-scan.ts, which times it against other forms). */
export function exactRankingQuery(where: RawBuilder<unknown>, vector: StoredVector, depth: number, reading: Reading, restore?: PlannerSettings): RawBuilder<{ id: string | number }> {
  return sql<{ id: string | number }>`
    with probe as materialized (select ${vectorParameter(vector)} as vector),
    own_ranked as materialized (
      select id, ${probeDistance(reading)} as distance from memories, probe where ${where} ${restore === undefined ? sql`` : sql`and ${restored(restore)}`}
       order by distance, id desc
       limit ${depth})
    ${rankedAsRead('own_ranked', reading, where, sql`(select vector from probe)`, depth)}`;
}

/**
 * vectorRanking for a size that walkAtOnce answered (`restore`), and `alongside`, a query that needs nothing from
 * it, in the same statement: one round trip for both. `alongside`'s rows come back as JSON objects (numbers
 * keep every bit: float8 prints as the shortest text that reads back the same), in its order.
 * `alongside` is planned under the walk's settings (no sort unless unavoidable, no JIT); they change its plan,
 * never its rows.
 */
export async function walkIndexWith<A extends AlongsideQueries>(
  trx: DbTransaction,
  spaces: SpaceKeys,
  vector: StoredVector,
  depth: number,
  restore: PlannerSettings,
  inConversations: number,
  alongside: A,
): Promise<{ ids: number[]; plan: VectorPlan; alongside: AlongsideRows<A> }> {
  const where = vectorConditions(spaces, NO_FILTERS, vector);
  const reading = recallReading(inConversations);
  const { rows } = await prepared(sql<{ ids: (string | number)[]; alongside: AlongsideRows<A> }>`
    with vector_ranked as materialized (${hnswQuery(where, vector, depth, restore, reading)})
         ${alongsideQueries(alongside)}
    select (select coalesce(json_agg(id order by distance, id desc), '[]') from vector_ranked) as ids,
           ${alongsideRows(alongside)} as alongside`).execute(trx);
  const row = rows[0];
  const walked = (row?.ids ?? []).map(Number);
  const others = row!.alongside;
  // Short (expired rows, other models' vectors): the exact scan answers, as in vectorRanking.
  if (walked.length >= depth) return { ids: walked, plan: 'hnsw', alongside: others };
  return { ids: await exactRanking(trx, where, vector, depth, reading), plan: 'exact', alongside: others };
}

/**
 * Whether a candidate set of this size is ranked by walking the index (see vectorRanking). `countedAbove`: the
 * size is the candidates' exact number (subject_stats, no filters), above this ExactScanLimit; undefined when it
 * is a lower bound from a capped probe, which may stand for many more rows.
 */
function walksIndex(vector: StoredVector, candidates: number, size: SubjectSize, countedAbove: number | undefined): boolean {
  if (!isIndexable(vector.dimensions) || shareOfTable(candidates, size.tableRows) < MIN_INDEX_SHARE) return false;
  const exactStillCheaper =
    countedAbove !== undefined && candidates <= COUNTED_EXACT_FACTOR * countedAbove && size.tableRows > 0 && candidates * candidates < WALK_BREAK_EVEN * size.tableRows;
  return !exactStillCheaper;
}

/**
 * The settings to put back when vectorRanking, given this size, would walk the index at once (no filters, more
 * memories than exactScanLimit, the walk's settings applied by sizeForVectorRanking): a caller that walks the
 * index itself in a statement of its own (hnswQuery) restores them there. Undefined when vectorRanking would not.
 */
export function walkAtOnce(size: RankingSize, vector: StoredVector, exactScanLimit: number): PlannerSettings | undefined {
  return size.memories > exactScanLimit && walksIndex(vector, size.memories, size, exactScanLimit) ? size.walkSettings : undefined;
}

/** subjectSize, with the index walk's settings when they were applied in the same statement. */
export interface RankingSize<A = unknown> extends SubjectSize {
  /** The planner settings as they were before the walk's were applied; undefined when none were. */
  readonly walkSettings: PlannerSettings | undefined;
  /** The value of the expression evaluated alongside (sizeForVectorRanking's `alongside`). */
  readonly alongside: A | undefined;
}

/**
 * subjectSize and, in the same statement, the index walk's settings (configureIterativeScan) when the size shows
 * that vectorRanking will walk the index without looking further (no filters, more memories than
 * exactScanLimit): one round trip where there were two. vectorRanking, given this size, puts them back.
 */
export async function sizeForVectorRanking<A = unknown>(
  trx: DbTransaction,
  spaces: SpaceKeys,
  filters: MemoryFilters,
  exactScanLimit: number,
  efSearch: number,
  alongside?: RawBuilder<A>,
): Promise<RankingSize<A>> {
  const known = !hasFilters(filters) && Number.isFinite(exactScanLimit);
  // `alongside` (remember: the subject's write lock; recall: look-ups of the question's words) is evaluated in this
  // statement too, sparing its own round trip.
  const { rows } = await prepared(sql<SubjectSizeRow & PlannerSettings & { walk: string | null; alongside?: A }>`
    with size as materialized (${subjectSizeQuery(spaces)})
    select memories, in_conversations, restatements, table_rows, ${currentPlannerSettings},
           case when ${known ? sql`memories > ${exactScanLimit}` : sql`false`} then ${walkSettings(efSearch)} end as walk
           ${alongside === undefined ? sql`` : sql`, ${alongside} as alongside`}
      from size`).execute(trx);
  const row = rows[0];
  return { ...toSubjectSize(row), walkSettings: row?.walk == null ? undefined : plannerSettingsOf(row), alongside: row?.alongside };
}

/**
 * The candidate rows of the vector ranking: the filters, plus vectors of the query's own model. The dimension
 * is a literal so the planner can match the partial index's `embedding_dimensions = N` predicate.
 */
export function vectorConditions(spaces: SpaceKeys, filters: MemoryFilters, vector: StoredVector): RawBuilder<unknown> {
  return sql`${memoryConditions(spaces, filters)}
    and embedding_model = ${vector.model} and embedding_dimensions = ${sql.lit(vector.dimensions)}`;
}

/** candidates / the table's estimated rows (1 when never analysed, as PGlite without autovacuum may be). */
function shareOfTable(candidates: number, tableRows: number): number {
  return tableRows > 0 ? Math.min(1, candidates / tableRows) : 1;
}

/**
 * Transaction-local settings for the index walk: relaxed_order keeps walking the graph until `depth` rows pass
 * the filters (or the tuple budget runs out), and hnswQuery's outer ORDER BY restores exact distance order among
 * what was found. Sorting is discouraged because the count has already shown the candidate set is too large to
 * sort; the planner's own row estimates know nothing of one subject's share under these filters. That makes
 * the plan's cost look huge, which must not trigger JIT compilation (measured: 300 ms for a 17 ms query).
 * The walk's statements are planned once per connection (prepared.ts: a generic plan, kept), which these
 * settings make the same plan whatever the vector: planning it was a fifth of a large subject's recall.
 */
export async function configureIterativeScan(trx: DbTransaction, efSearch: number): Promise<PlannerSettings> {
  // The current values are read before they are changed: a select list is evaluated in order.
  const { rows } = await sql<PlannerSettings>`select ${currentPlannerSettings}, ${walkSettings(efSearch)}`.execute(trx);
  return plannerSettingsOf(rows[0]);
}

/**
 * The settings the walk needs only while it is planned (walkSettings), and which the walk statement itself puts
 * back (restored): PlannerSettings' keys, each with its setting, the walk's value and the server's default.
 */
const PLANNER = {
  sort: { setting: 'enable_sort', walk: 'off', fallback: 'on' },
  jit: { setting: 'jit', walk: 'off', fallback: 'on' },
  plans: { setting: 'plan_cache_mode', walk: 'force_generic_plan', fallback: 'auto' },
} as const;
const PLANNER_KEYS = Object.keys(PLANNER) as (keyof typeof PLANNER)[];

/** The planner settings configureIterativeScan changes, as they were. */
export type PlannerSettings = { readonly [K in keyof typeof PLANNER]: string };

/** The settings walkSettings changes, as they are (PlannerSettings' columns). */
const currentPlannerSettings = sql.join(PLANNER_KEYS.map((key) => sql`current_setting(${sql.lit(PLANNER[key].setting)}) as ${sql.id(key)}`));

/** PlannerSettings' columns of a row, the server's defaults where the row has none. */
function plannerSettingsOf(row: Partial<PlannerSettings> | undefined): PlannerSettings {
  const settings = Object.fromEntries(PLANNER_KEYS.map((key) => [key, row?.[key] ?? PLANNER[key].fallback]));
  return settings as PlannerSettings;
}

/** Applies the walk's settings (configureIterativeScan); one text value, never null. */
function walkSettings(efSearch: number): RawBuilder<string> {
  return sql<string>`set_config('hnsw.iterative_scan', 'relaxed_order', true)
    || set_config('hnsw.ef_search', ${String(Math.min(1000, Math.max(100, efSearch)))}, true)
    || set_config('hnsw.max_scan_tuples', '100000', true)
    || ${sql.join(PLANNER_KEYS.map((key) => sql`set_config(${sql.lit(PLANNER[key].setting)}, ${sql.lit(PLANNER[key].walk)}, true)`), sql` || `)}`;
}

/** A condition on no row, true once `restore`'s settings are back: a one-time filter of the statement it is in. */
function restored(restore: PlannerSettings): RawBuilder<boolean> {
  const each = PLANNER_KEYS.map((key) => sql`set_config(${sql.lit(PLANNER[key].setting)}, ${restore[key]}, true)`);
  return sql<boolean>`(select ${sql.join(each, sql` || `)}) is not null`;
}

/**
 * Reaches the per-dimension partial HNSW index: same expression, same `embedding_dimensions = N` predicate.
 * `restore` puts the planner settings back while the walk runs (they were needed only to plan it), so the rest
 * of the transaction plans as usual without another round trip; the one-time filter runs even when nothing is found.
 * Read as recall reads (`reading`), the rows the walk found (by their whole texts) are ordered by their passages
 * too, and read with the turns after them: the index holds whole texts only, so a large subject's memory is found by
 * a passage only among its nearest whole texts.
 */
export function hnswQuery(
  where: RawBuilder<unknown>,
  vector: StoredVector,
  depth: number,
  restore?: PlannerSettings,
  reading: Reading = 'whole',
): RawBuilder<{ id: string | number; distance: number }> {
  const once = restore === undefined ? sql`` : sql`where ${restored(restore)}`;
  // The walk's rows carry their passages (read only for the rows it returns): no second look-up of memories,
  // which under the walk's planner settings could be planned as a scan of the whole table.
  const nearest = sql`
    with nearest as materialized (
      select id, ${indexedCosineDistance(vector)} as distance ${reading === 'whole' ? sql`` : sql`, passage_embeddings`}
        from memories
       where ${where}
       order by distance
       limit ${depth})`;
  if (reading === 'whole') return sql<{ id: string | number; distance: number }>`${nearest} select id, distance from nearest ${once} order by distance, id desc`;
  return sql<{ id: string | number; distance: number }>`${nearest},
    walked as materialized (
      select id, ${passageAwareDistance(vectorParameter(vector), sql<number>`distance`)} as distance from nearest ${once})
    ${rankedAsRead('walked', reading, where, vectorParameter(vector), depth)}`;
}
