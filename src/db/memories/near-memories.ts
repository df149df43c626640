import { sql, type RawBuilder } from 'kysely';
import { cosineDistance, type StoredVector } from '../pgvector.js';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { NO_FILTERS, notExpired } from './filters.js';
import type { NearMemory } from './records.js';
import { textRankingQuery } from './text-ranking.js';
import { hnswQuery, sizeForVectorRanking, vectorConditions, vectorRanking, walkAtOnce } from './vector-ranking.js';
import { subjectWriteLock } from './write-lock.js';

/**
 * How wide the index walk searches for a large subject's near-duplicates (hnsw.ef_search): on the synthetic 100k
 * subject of bench/heavy-subject.ts (clusters of ~400 near-identical vectors, harder than real text), a search
 * of 100 or 200 missed the stored row itself for 1 of 200 texts remembered again, 400 found all of them (another
 * build of that graph left 2 rows unreachable at any width: hence the lookup by text below). The walk
 * returns only the `limit` nearest: the index hands its first candidates over in exact distance order, so
 * the first `limit` of a search this wide are the same whether 20 or 200 are read.
 */
const WALK_EF_SEARCH = 400;

/**
 * The subject's live memories of the same embedding model at or above `minSimilarity`, best first (with
 * `nearestBelow`, the few nearest below it as well; with `worded`, those found by their words).
 *
 * A subject of up to `exactScanLimit` memories (every subject in normal use) is scanned exactly, so no
 * near-duplicate is missed. A larger one would cost a scan of all its rows on every remember (~0.1 s at
 * 100k), so its nearest rows come from vectorRanking's walk of the HNSW index with an iterative scan, in the
 * same statement as the similarity cut and exact order applied to them (the exact scan answers when the walk
 * comes back short). With `lockForWrite`, the subject's write lock is taken in the first statement.
 * Near-duplicates lie far above the similarities an approximate walk gets wrong,
 * but a graph can leave a row unreachable: a memory whose text is exactly `text` is therefore looked up by
 * its text too (migration 0009's index), so the same text sent again is always among the candidates, first.
 */
export async function findNearMemories(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
  exactScanLimit: number,
  options: { readonly text?: string | undefined; readonly lockForWrite?: boolean; readonly worded?: WordedSearch; readonly nearestBelow?: NearestBelow } = {},
): Promise<NearMemory[]> {
  const { text, worded, nearestBelow } = options;
  // The lock (when asked for) is taken by the size's statement: the size only chooses the plan, and every row
  // read below is read by a later statement, which sees what writers committed before the lock was granted.
  const size = await sizeForVectorRanking(trx, subject, NO_FILTERS, exactScanLimit, WALK_EF_SEARCH, options.lockForWrite === true ? subjectWriteLock(subject) : undefined);
  // One statement reads down to the lower bound; best first, so the rows at or above minSimilarity come first.
  const reached = await nearestRows(trx, subject, vector, size, { minSimilarity: Math.min(minSimilarity, nearestBelow?.minSimilarity ?? minSimilarity), limit, exactScanLimit, text });
  const within = reached.filter((row) => row.similarity >= minSimilarity);
  const near = [...within, ...reached.slice(within.length, within.length + (nearestBelow?.count ?? 0))];
  if (worded === undefined || worded.words.trim() === '' || within.length >= worded.unlessFound) return near.map(toNearMemory);
  // The memories that say most of the same words, whatever their similarity: a paraphrase the model scores low
  // ("Lisbon hotel booking ref: QX7T42") still shares its rare words with what it restates.
  const known = new Set(near.map((row) => Number(row.id)));
  const hits = sql<{ id: string | number }>`
    select id from (${textRankingQuery(subject, NO_FILTERS, worded.words, worded.limit, size.memories)}) as hit
     where hit.coverage >= ${worded.minCoverage}`;
  // At any similarity but a negative one (a similarity is reported in [0, 1]).
  const byWords = await nearRows(trx, subject, vector, 0, worded.limit, { worded: hits });
  return [...near, ...byWords.filter((row) => !known.has(Number(row.id)))].map(toNearMemory);
}

/** Candidates found by their words (findNearMemories): the full-text ranking's first `limit` covering `minCoverage`. */
export interface WordedSearch {
  readonly words: string;
  readonly limit: number;
  /** The least share of the words' weight (idf) a memory must say. */
  readonly minCoverage: number;
  /** Not searched when the vectors found this many already (a large subject's busy topic: the search costs there). */
  readonly unlessFound: number;
}

/** The `count` nearest memories below findNearMemories' minSimilarity, down to this one's, as candidates too. */
export interface NearestBelow {
  readonly minSimilarity: number;
  readonly count: number;
}

/** findNearMemories by the vectors alone: the exact scan, or the index walk for a subject of that `size`. */
async function nearestRows(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  size: Awaited<ReturnType<typeof sizeForVectorRanking>>,
  { minSimilarity, limit, exactScanLimit, text }: { minSimilarity: number; limit: number; exactScanLimit: number; text: string | undefined },
): Promise<NearRow[]> {
  if (size.memories <= exactScanLimit) return nearRows(trx, subject, vector, minSimilarity, limit, undefined);
  const restore = walkAtOnce(size, vector, exactScanLimit);
  if (restore !== undefined) {
    // The walk and the similarity cut in one statement (vectorRanking's walk, hnswQuery, as its subquery);
    // when the walk comes back short, the exact scan answers, as vectorRanking's would.
    const walk = hnswQuery(vectorConditions(subject, NO_FILTERS, vector), vector, limit, restore);
    const rows = await nearRows(trx, subject, vector, minSimilarity, limit, { walk, text });
    const walked = Number(rows[0]?.walked ?? 0);
    if (walked >= limit) return rows.filter((row) => row.id !== null);
    return nearRows(trx, subject, vector, minSimilarity, limit, { text });
  }
  const ranked = await vectorRanking(trx, subject, NO_FILTERS, vector, limit, { exactScanLimit, size, efSearch: WALK_EF_SEARCH });
  if (ranked.ids.length === 0) return [];
  return nearRows(trx, subject, vector, minSimilarity, limit, { ids: ranked.ids, text });
}

interface NearRow {
  id: string | number | null;
  text: string;
  tags: string[];
  created_at: Date;
  last_confirmed_at: Date;
  similarity: number;
  /** How many rows the index walk returned (with `among.walk` only). */
  walked?: string | number;
}

/**
 * The subject's live memories of the vector's model at or above `minSimilarity`, nearest first: all of them,
 * or (`among`) only the given ids or the rows of an index walk, plus the memory whose text is exactly `among.text`,
 * listed first whatever the vectors say (they agree, but for a provider's rounding). With `among.walk`, every row
 * also carries how many rows the walk returned, and one row of nulls stands for no match.
 */
async function nearRows(
  trx: DbTransaction,
  subject: string,
  vector: StoredVector,
  minSimilarity: number,
  limit: number,
  among:
    | { readonly ids?: readonly number[]; readonly walk?: RawBuilder<{ id: string | number }>; readonly worded?: RawBuilder<{ id: string | number }>; readonly text?: string | undefined }
    | undefined,
): Promise<NearRow[]> {
  const conditions = [sql`subject = ${subject}`, sql`embedding_model = ${vector.model}`, notExpired];
  // An array, not a semi-join: `id in (subquery) or …` could not use an index; `= any(array)` uses the key's.
  const ids =
    among?.walk !== undefined
      ? sql`id = any(array(select id from walked))`
      : among?.worded !== undefined
        ? sql`id = any(array(${among.worded}))`
        : among?.ids !== undefined
          ? sql`id in (${sql.join(among.ids)})`
          : undefined;
  const sameText = among?.text === undefined ? undefined : sql`(md5(text) = md5(${among.text}) and text = ${among.text})`;
  if (ids !== undefined) conditions.push(sameText === undefined ? ids : sql`(${ids} or ${sameText})`);
  // The distance is named once (one vector parameter; see cosineDistance); the planner flattens the subquery.
  const near = sql`
    select id, text, tags, created_at, last_confirmed_at, 1 - distance as similarity
      from (select id, text, tags, created_at, last_confirmed_at, ${cosineDistance(vector)} as distance
              from memories
             where ${sql.join(conditions, sql` and `)}) as scored
     where 1 - distance >= ${minSimilarity}
     order by ${among?.text === undefined ? sql`` : sql`text = ${among.text} desc,`} distance, id desc
     limit ${limit}`;
  if (among?.walk === undefined) return (await prepared(sql<NearRow>`${near}`).execute(trx)).rows;
  const { rows } = await prepared(sql<NearRow>`
    with walked as materialized (${among.walk})
    select near.*, (select count(*) from walked) as walked
      from (select 1) as one
      left join lateral (${near}) as near on true`).execute(trx);
  return rows;
}

function toNearMemory(row: NearRow): NearMemory {
  return {
    id: Number(row.id),
    text: row.text,
    similarity: Number(row.similarity),
    tags: row.tags,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
  };
}
