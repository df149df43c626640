import { sql, type RawBuilder } from 'kysely';
import type { StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';
import { continuationsQuery, toContinuations, type Continuation, type ContinuationRow } from './conversation.js';
import { inSpaces, notExpired, type SpaceKeys } from './filters.js';
import { latestTexts, latestTextsQuery } from './read-memories.js';
import type { MemoryFilters } from './records.js';
import {
  RESTATEMENT_RANKING_ORDER,
  restatementRanking,
  restatementRankingQuery,
  toRestatementHit,
  type RestatementHit,
  type RestatementHitRow,
} from './restatement-ranking.js';
import {
  questionWordLookups,
  TEXT_RANKING_ORDER,
  textRanking,
  textRankingQuery,
  toTextHit,
  type QuestionWordLookups,
  type TextHit,
  type TextHitRow,
} from './text-ranking.js';
import {
  alongsideRanked,
  sizeForVectorRanking,
  VECTOR_RANKED,
  vectorRanking,
  walkAtOnce,
  walkIndexWith,
  type Alongside,
  type VectorPlan,
} from './vector-ranking.js';

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
 *     Its round trip is the transaction's: the start and the row-level settings are written with it (guarded-pool.ts).
 *  2. One statement ranks by vector and, alongside, by full text, by the person words when the memories use none
 *     of the question's, and (for a subject that has some) the restatements by vector and words, and reads the
 *     texts of each ranking's first memories for the retrievers that start from the first fused results and, for a
 *     subject with conversations, the memory said next after each of the very first (the continuation's): an exact
 *     scan of a candidate set up to exactScanLimit rows (counted in the same pass), else the index walk, whose
 *     statement puts the settings back. Only a filtered candidate set larger than exactScanLimit needs more (the
 *     walk, or an exact scan if it comes back short: vectorRanking).
 */
export const RANKING_DEPTH = 100;
/** Candidate sets up to this size are ranked by exact vector search (see vectorRanking). */
export const DEFAULT_EXACT_SCAN_LIMIT = 5000;
/** How much of a matched restatement's text is read (recall shows it under its memory). */
const RESTATEMENT_CHARS = 500;
/**
 * Of how many of each ranking's first memories the next in their conversation is read with the rankings: the best
 * fused result (whose next the continuation retriever ranks) was among them for 1,505 of LoCoMo's 1,536 questions.
 */
const CONTINUATION_ANCHORS = 5;
/**
 * The texts read with the rankings are of each ranking's first (wanted + FIRST_TEXTS_MARGIN) memories: the first
 * wanted fused results were among them for every question of the own sets (229 reads) and for 398 of LoCoMo's 433
 * (the rest are read when asked: one more round trip).
 */
const FIRST_TEXTS_MARGIN = 5;

export interface RecallQuestion {
  readonly vector: StoredVector;
  readonly filters: MemoryFilters;
  /** The question's content words, for the full-text rankings. */
  readonly words: string;
  /**
   * Other words for some of them ("dad" → father, "doctor" → dr), searched with them when some memory uses them:
   * one no memory uses would only lower the share of the question that each hit covers.
   */
  readonly alternatives: readonly string[];
  /** Words whose use by the subject's memories is asked (QuestionWordLookups). */
  readonly meaningWords: readonly string[];
  readonly personWords: readonly string[];
  /** The words the person ranking searches when the memories use none of `personWords` ("partner", "husband" …). */
  readonly personSearched: readonly string[];
  /**
   * The texts the retrievers that start from the first fused results will read: how many of them, given what the
   * look-ups found (0: none), and how much of each.
   */
  readonly firstTexts: { readonly count: (lookups: QuestionWordLookups) => number; readonly chars: number };
  /** The latest texts of a space to read too (the first `chars` of `count`), or none. */
  readonly latestTexts?: { readonly space: string; readonly count: number; readonly chars: number };
}

/** What the question alone finds, before fusion. */
export interface FirstEvidence {
  /** The subject's memories nearest the question's vector, nearest first (at most RANKING_DEPTH). */
  readonly nearest: readonly number[];
  /** How the vector ranking ran. */
  readonly plan: VectorPlan;
  /** The full-text ranking's hits, best first (at most RANKING_DEPTH). */
  readonly worded: readonly TextHit[];
  /**
   * The full-text ranking by `personSearched`, best first: only for a question with person words none of the
   * subject's memories uses (the memories' own word is found by the full text); undefined otherwise.
   */
  readonly person: readonly TextHit[] | undefined;
  /** Restatements nearer the question than their memory's own text, or sharing its words. */
  readonly restatements: readonly RestatementHit[];
  readonly lookups: QuestionWordLookups;
  /**
   * Texts of the first memories of each ranking (firstTexts' count and chars), read with the rankings: the first
   * fused results are nearly always among them.
   */
  readonly texts: ReadonlyMap<number, string>;
  /**
   * For each ranking's first CONTINUATION_ANCHORS memories, what was said next in the same conversation
   * (continuationOf; null: nothing), read with the rankings; empty for a subject with no memory in a conversation.
   */
  readonly continuations: ReadonlyMap<number, Continuation | null>;
  /** The subject's number of memories (sizes the other full-text rankings) and of those in a conversation. */
  readonly memories: number;
  readonly inConversations: number;
  /** The latest texts asked for (RecallQuestion.latestTexts), newest first; undefined when none were. */
  readonly latestTexts: readonly string[] | undefined;
}

export async function gatherFirstEvidence(trx: DbTransaction, spaces: SpaceKeys, question: RecallQuestion, options: { readonly exactScanLimit: number }): Promise<FirstEvidence> {
  const { exactScanLimit } = options;
  const efSearch = RANKING_DEPTH * 2;
  const size = await sizeForVectorRanking(trx, spaces, question.filters, exactScanLimit, efSearch, questionWordLookups(spaces, question.meaningWords, question.personWords, question.alternatives));
  const lookups = size.alongside ?? { unused: [], usesPersonWords: false, unusedAlternatives: [...question.alternatives] };
  const unusedAlternatives = new Set(lookups.unusedAlternatives);
  const words = [question.words, ...question.alternatives.filter((word) => !unusedAlternatives.has(word))].join(' ');
  const searchedForPerson = question.personSearched.length > 0 && !lookups.usesPersonWords ? question.personSearched.join(' ') : undefined;
  // Every ranking that needs nothing from the vectors rides in the vector ranking's statement: the full text, the
  // person words', a subject's restatements when it has some, and the texts of each ranking's first memories.
  const textArguments = (words: string) => [spaces, question.filters, words, RANKING_DEPTH, size.memories] as const;
  const restatementArguments = [spaces, question.filters, words, question.vector, RANKING_DEPTH, RESTATEMENT_CHARS] as const;
  const alongside: Alongside<unknown>[] = [];
  const add = (query: Alongside<unknown>): number => alongside.push(query) - 1;
  const textAt = add({ query: textRankingQuery(...textArguments(words)), order: TEXT_RANKING_ORDER });
  const personAt = searchedForPerson === undefined ? undefined : add({ query: textRankingQuery(...textArguments(searchedForPerson)), order: TEXT_RANKING_ORDER });
  const restatedAt = size.restatements > 0 ? add({ query: restatementRankingQuery(...restatementArguments), order: RESTATEMENT_RANKING_ORDER }) : undefined;
  const textCount = question.firstTexts.count(lookups);
  const textsAt = textCount > 0 ? add(firstTextsQuery(spaces, [textAt, personAt], textCount + FIRST_TEXTS_MARGIN, question.firstTexts.chars)) : undefined;
  const latest = question.latestTexts;
  const latestAt = latest === undefined ? undefined : add({ query: latestTextsQuery(latest.space, latest.count, latest.chars), order: sql`1` });
  const continuationsAt =
    size.inConversations > 0 ? add({ query: continuationsQuery(spaces, question.filters, firstIds([textAt, personAt], CONTINUATION_ANCHORS)), order: sql`anchor` }) : undefined;
  const restore = walkAtOnce(size, question.vector, exactScanLimit);
  const vector =
    restore === undefined
      ? await vectorRanking(trx, spaces, question.filters, question.vector, RANKING_DEPTH, { exactScanLimit, size, efSearch, recall: true }, alongside)
      : await walkIndexWith(trx, spaces, question.vector, RANKING_DEPTH, restore, size.inConversations, alongside);
  const rowsAt = <T>(at: number | undefined): T[] | undefined => (at === undefined ? undefined : (vector.alongside?.[at] as T[] | undefined));
  // Not run alongside (a large subject whose index cannot be walked): each in a statement of its own, no texts.
  const worded = rowsAt<TextHitRow>(textAt)?.map(toTextHit) ?? (await textRanking(trx, ...textArguments(words)));
  const person = searchedForPerson === undefined ? undefined : (rowsAt<TextHitRow>(personAt)?.map(toTextHit) ?? (await textRanking(trx, ...textArguments(searchedForPerson))));
  const restatements = restatedAt === undefined ? [] : (rowsAt<RestatementHitRow>(restatedAt)?.map(toRestatementHit) ?? (await restatementRanking(trx, ...restatementArguments)));
  const texts = new Map((rowsAt<{ id: string | number; text: string }>(textsAt) ?? []).map((row) => [Number(row.id), row.text] as const));
  const continuations = toContinuations(rowsAt<ContinuationRow>(continuationsAt) ?? []);
  const latestTextRows = latest === undefined ? undefined : (rowsAt<{ text: string }>(latestAt)?.map((row) => row.text) ?? (await latestTexts(trx, latest.space, latest.count, latest.chars)));
  return {
    nearest: vector.ids,
    plan: vector.plan,
    worded,
    person,
    restatements,
    lookups,
    texts,
    continuations,
    memories: size.memories,
    inConversations: size.inConversations,
    latestTexts: latestTextRows,
  };
}

/**
 * The ids of the first `count` memories of the vector ranking and of the full-text rankings run alongside at
 * `rankings` (positions; undefined: not run), as a query (a column `id`) for a query run alongside them.
 */
function firstIds(rankings: readonly (number | undefined)[], count: number): RawBuilder<{ id: string | number }> {
  const firsts = [
    sql`(select id from ${VECTOR_RANKED} order by distance, id desc limit ${count})`,
    ...rankings.flatMap((at) => (at === undefined ? [] : [sql`(select id from ${alongsideRanked(at)} as found order by ${TEXT_RANKING_ORDER} limit ${count})`])),
  ];
  return sql<{ id: string | number }>`${sql.join(firsts, sql` union `)}`;
}

/** The live texts (first `chars`) of the first `count` memories of each ranking (firstIds), as a query run alongside them. */
function firstTextsQuery(spaces: SpaceKeys, rankings: readonly (number | undefined)[], count: number, chars: number): Alongside<{ id: string | number; text: string }> {
  return {
    query: sql`select id, left(text, ${chars}) as text from memories
                where ${inSpaces('subject', spaces)} and ${notExpired} and id in (${firstIds(rankings, count)})`,
    order: sql`id`,
  };
}
