import type { StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import type { SpaceKeys } from './filters.js';
import type { MemoryFilters } from './records.js';
import { RESTATEMENT_RANKING_ORDER, restatementRanking, restatementRankingQuery, toRestatementHit, type RestatementHit } from './restatement-ranking.js';
import { questionWordLookups, TEXT_RANKING_ORDER, textRanking, textRankingQuery, toTextHit, type QuestionWordLookups, type TextHit } from './text-ranking.js';
import { sizeForVectorRanking, vectorRanking, walkAtOnce, walkIndexWith, type VectorPlan } from './vector-ranking.js';

/**
 * Recall's planner: how the retrievers that start from the question alone run, and which of their statements share
 * a round trip. Everything else recall reads (the first results' texts, a conversation's next memory, the arranged
 * results) depends on the fused ranking and comes after.
 *
 *  1. One statement reads the subject's size (subject_stats: memories, restatements, memories in conversations,
 *     the table's estimated rows) and asks whether the subject's memories use the question's words
 *     (questionWordLookups); when the size shows the vector ranking will walk the HNSW index at once (no filters,
 *     more memories than exactScanLimit), it also applies the walk's planner settings (ef_search RANKING_DEPTH × 2,
 *     the iterative scan).
 *  2. One statement ranks by vector and, alongside, by full text and (for a subject that has some) the
 *     restatements by vector and words: an exact scan of a candidate set up to exactScanLimit rows (counted in the
 *     same pass), else the index walk, whose statement puts the settings back. Only a filtered candidate set larger
 *     than exactScanLimit needs more (the walk, or an exact scan if it comes back short: vectorRanking).
 */
export const RANKING_DEPTH = 100;
/** Candidate sets up to this size are ranked by exact vector search (see vectorRanking). */
export const DEFAULT_EXACT_SCAN_LIMIT = 5000;
/** How much of a matched restatement's text is read (recall shows it under its memory). */
const RESTATEMENT_CHARS = 500;

export interface RecallQuestion {
  readonly vector: StoredVector;
  readonly filters: MemoryFilters;
  /** The question's content words, for the full-text rankings. */
  readonly words: string;
  /** Words whose use by the subject's memories is asked (QuestionWordLookups). */
  readonly meaningWords: readonly string[];
  readonly personWords: readonly string[];
}

/** What the question alone finds, before fusion. */
export interface FirstEvidence {
  /** The subject's memories nearest the question's vector, nearest first (at most RANKING_DEPTH). */
  readonly nearest: readonly number[];
  /** How the vector ranking ran. */
  readonly plan: VectorPlan;
  /** The full-text ranking's hits, best first (at most RANKING_DEPTH). */
  readonly worded: readonly TextHit[];
  /** Restatements nearer the question than their memory's own text, or sharing its words. */
  readonly restatements: readonly RestatementHit[];
  readonly lookups: QuestionWordLookups;
  /** The subject's number of memories (sizes the other full-text rankings) and of those in a conversation. */
  readonly memories: number;
  readonly inConversations: number;
}

export async function gatherFirstEvidence(trx: DbTransaction, spaces: SpaceKeys, question: RecallQuestion, options: { readonly exactScanLimit: number }): Promise<FirstEvidence> {
  const { exactScanLimit } = options;
  const efSearch = RANKING_DEPTH * 2;
  const size = await sizeForVectorRanking(trx, spaces, question.filters, exactScanLimit, efSearch, questionWordLookups(spaces, question.meaningWords, question.personWords));
  // Both rankings that need nothing from the vectors ride in their statement: the full text, and a subject's
  // restatements when it has some.
  const textArguments = [spaces, question.filters, question.words, RANKING_DEPTH, size.memories] as const;
  const restatementArguments = [spaces, question.filters, question.words, question.vector, RANKING_DEPTH, RESTATEMENT_CHARS] as const;
  const text = { query: textRankingQuery(...textArguments), order: TEXT_RANKING_ORDER };
  const restated = size.restatements > 0 ? { query: restatementRankingQuery(...restatementArguments), order: RESTATEMENT_RANKING_ORDER } : undefined;
  const alongside = restated === undefined ? ([text] as const) : ([text, restated] as const);
  const restore = walkAtOnce(size, question.vector, exactScanLimit);
  const vector =
    restore === undefined
      ? await vectorRanking(trx, spaces, question.filters, question.vector, RANKING_DEPTH, { exactScanLimit, size, efSearch, passages: true }, alongside)
      : await walkIndexWith(trx, spaces, question.vector, RANKING_DEPTH, restore, alongside);
  const [wordedRows, restatedRows] = vector.alongside ?? [];
  // Not run alongside (a large subject whose index cannot be walked): each in a statement of its own.
  const worded = wordedRows?.map(toTextHit) ?? (await textRanking(trx, ...textArguments));
  const restatements = restated === undefined ? [] : (restatedRows?.map(toRestatementHit) ?? (await restatementRanking(trx, ...restatementArguments)));
  return {
    nearest: vector.ids,
    plan: vector.plan,
    worded,
    restatements,
    lookups: size.alongside ?? { unused: [], usesPersonWords: false },
    memories: size.memories,
    inConversations: size.inConversations,
  };
}
