import type { MemoryFilters } from '../db/memories/records.js';
import { subjectMemoryCount } from '../db/memories/subject-stats.js';
import { textRanking } from '../db/memories/text-ranking.js';
import { vectorRanking, type VectorPlan } from '../db/memories/vector-ranking.js';
import type { StoredVector } from '../db/pgvector.js';
import type { DbTransaction } from '../db/schema.js';
import { fuseRankings, type FusedItem } from './rank-fusion.js';

/** How deep each retriever ranks before fusion: at least twice the largest recall limit. */
const RANKING_DEPTH = 100;
/**
 * Fusion constants, measured on LoCoMo (bench/recall-quality.ts): a small k lets the top of each list count,
 * and the full-text ranking, which finds names, dates and numbers, weighs a little more than the vectors.
 */
const RRF_K = 20;
const VECTOR_WEIGHT = 1;
const TEXT_WEIGHT = 1.5;
/** Candidate sets up to this size are ranked by exact vector search (see vectorRanking). */
export const DEFAULT_EXACT_SCAN_LIMIT = 5000;

/** Which retrievers rank: recall uses both; benchmarks compare each alone. */
export type RecallStrategy = 'hybrid' | 'vector' | 'text';

export interface RankingQuery {
  readonly text: string;
  /** The text's embedding; needed by every strategy but 'text'. */
  readonly vector: StoredVector | undefined;
  readonly filters: MemoryFilters;
}

export interface Ranking {
  /** Every ranked id, best first, with its fused score in (0, 1]. */
  readonly ranked: readonly FusedItem[];
  /** How the vector ranking ran; undefined when it did not. */
  readonly plan: VectorPlan | undefined;
}

/**
 * The subject's memories ranked for `query`: vector similarity and full-text rank, fused by weighted
 * reciprocal rank fusion (README, "Ranking"). Runs inside the caller's subject-scoped transaction.
 */
export async function rankMemories(
  trx: DbTransaction,
  subject: string,
  query: RankingQuery,
  options: { readonly strategy: RecallStrategy; readonly exactScanLimit: number },
): Promise<Ranking> {
  const rankings: number[][] = [];
  const weights: number[] = [];
  let plan: VectorPlan | undefined;
  const subjectMemories = await subjectMemoryCount(trx, subject);
  if (options.strategy !== 'text') {
    if (query.vector === undefined) throw new RangeError(`the ${options.strategy} ranking needs the query's embedding`);
    const vector = await vectorRanking(trx, subject, query.filters, query.vector, RANKING_DEPTH, { exactScanLimit: options.exactScanLimit, subjectMemories });
    rankings.push(vector.ids);
    weights.push(VECTOR_WEIGHT);
    plan = vector.plan;
  }
  if (options.strategy !== 'vector') {
    rankings.push(await textRanking(trx, subject, query.filters, query.text, RANKING_DEPTH, subjectMemories));
    weights.push(TEXT_WEIGHT);
  }
  return { ranked: fuseRankings(rankings, weights, RRF_K), plan };
}
