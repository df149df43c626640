import { nextInConversation } from '../db/memories/conversation.js';
import { fetchMemories } from '../db/memories/read-memories.js';
import type { MemoryFilters } from '../db/memories/records.js';
import { restatementRanking, type RestatementHit } from '../db/memories/restatement-ranking.js';
import { questionWordLookups, TEXT_RANKING_ORDER, textRanking, textRankingQuery, toTextHit, type TextHit } from '../db/memories/text-ranking.js';
import { sizeForVectorRanking, vectorRanking, walkAtOnce, walkIndexWith, type VectorPlan } from '../db/memories/vector-ranking.js';
import type { StoredVector } from '../db/pgvector.js';
import type { DbTransaction } from '../db/schema.js';
import { arrangeFirstResults } from './arrange-results.js';
import { bridgedByMeaning, dictionaryWords } from './meaning-bridge.js';
import { asksAboutRole, bridgeNames, contentWords, meaningCandidates, personWords, textWords } from './query-analysis.js';
import { fuseRankings, type FusedItem, type Ranking as RetrieverRanking } from './rank-fusion.js';
import type { SpaceKeys } from '../db/memories/filters.js';

/** How deep each retriever ranks before fusion: at least twice the largest recall limit. */
export const RANKING_DEPTH = 100;
/**
 * Fusion constants, measured on LoCoMo turns and observations and the development set (bench/README.md, "Recall and
 * dedup quality"): a small k lets the top of each list count; the full-text ranking, which finds names, dates and
 * numbers, weighs more than the vectors, but only as far as a hit covers the question: one whose matching words
 * carry less than FULL_COVERAGE of the query's idf mass is scaled down in proportion (a shared "user", "work" or
 * modal verb next to the question's real subject), one at or above it counts fully.
 */
const RRF_K = 35;
const VECTOR_WEIGHT = 1;
const TEXT_WEIGHT = 1.75;
const FULL_COVERAGE = 0.4;
/** How many of the first fused results may name the person a role question asks about, and how much of each is read. */
const BRIDGE_SOURCES = 3;
const BRIDGE_SOURCE_CHARS = 2000;
/** The bridged ranking's say: as much as the vectors'. */
const BRIDGE_WEIGHT = 1;
/** The say of the ranking by the other words for the person asked about (personRanking): at 1 it cost a LoCoMo cell. */
const PERSON_WEIGHT = 0.75;
/** How many of the first fused results the meaning bridge reads, and its say: a nudge within the first results. */
const MEANING_SOURCES = 30;
const MEANING_WEIGHT = 0.2;
/**
 * The say of the memory remembered right after the best result in its conversation (continuationRanking): at 0.4
 * and above it cost a LoCoMo cell (open-domain), at 0.3 none.
 */
const CONTINUATION_WEIGHT = 0.3;
/** Candidate sets up to this size are ranked by exact vector search (see vectorRanking). */
export const DEFAULT_EXACT_SCAN_LIMIT = 5000;
/** How much of a matched restatement's text is read (recall shows it under its memory). */
const RESTATEMENT_CHARS = 500;

export interface RankingQuery {
  readonly text: string;
  readonly vector: StoredVector;
  readonly filters: MemoryFilters;
}

export interface Ranking {
  /** Every ranked id, best first, with its fused score in (0, 1]. */
  readonly ranked: readonly FusedItem[];
  /** How the vector ranking ran. */
  readonly plan: VectorPlan;
  /** The restatements that matched, by memory id, nearest first. */
  readonly restatements: ReadonlyMap<number, readonly RestatementHit[]>;
}

/**
 * The subject's memories ranked for `query`: vector similarity and full-text rank (over the question's content
 * words), fused by evidence-weighted reciprocal rank fusion (README, "Ranking"). Runs inside the caller's subject-scoped transaction.
 */
export async function rankMemories(trx: DbTransaction, spaces: SpaceKeys, query: RankingQuery, options: { readonly exactScanLimit: number }): Promise<Ranking> {
  const efSearch = RANKING_DEPTH * 2;
  // The question's words that may be bridged by meaning, and its person words: whether the subject's memories use
  // them is asked in the statement that reads the subject's size.
  const meaningWords = dictionaryWords(meaningCandidates(query.text));
  const person = personWords(query.text);
  const size = await sizeForVectorRanking(trx, spaces, query.filters, options.exactScanLimit, efSearch, questionWordLookups(spaces, meaningWords, person.asked));
  const lookups = size.alongside ?? { unused: [], usesPersonWords: false };
  const words = contentWords(query.text);
  // A subject known to be large walks the index at once, in a statement of its own (walkIndexWith).
  const restore = walkAtOnce(size, query.vector, options.exactScanLimit);
  // The full-text ranking rides in the vector ranking's first statement: one round trip for both.
  const text = { query: textRankingQuery(spaces, query.filters, words, RANKING_DEPTH, size.memories), order: TEXT_RANKING_ORDER };
  const vector =
    restore === undefined
      ? await vectorRanking(trx, spaces, query.filters, query.vector, RANKING_DEPTH, { exactScanLimit: options.exactScanLimit, size, efSearch, passages: true }, text)
      : await walkIndexWith(trx, spaces, query.vector, RANKING_DEPTH, restore, text);
  const hits = vector.alongside?.map(toTextHit) ?? (await textRanking(trx, spaces, query.filters, words, RANKING_DEPTH, size.memories));
  // A subject with restatements (subject_stats says) ranks them too, in one more statement: each memory keeps its
  // best evidence, its own text's or a restatement's, in each ranking.
  const found = size.restatements > 0 ? await restatementRanking(trx, spaces, query.filters, words, query.vector, RANKING_DEPTH, RESTATEMENT_CHARS) : [];
  const nearer = found.filter((hit) => hit.distance !== undefined && hit.distance < (hit.memoryDistance ?? 2)).map((hit) => hit.memoryId);
  const worded = found.filter((hit) => hit.coverage > 0).sort((a, b) => b.coverage - a.coverage);
  const rankings: RetrieverRanking[] = [
    { ids: bestPositions(vector.ids, nearer), weight: VECTOR_WEIGHT },
    textHitsRanking(bestHits(hits, worded.map((hit) => ({ id: hit.memoryId, coverage: hit.coverage }))), TEXT_WEIGHT),
  ];
  const plan = vector.plan;
  const restatements = new Map<number, RestatementHit[]>();
  for (const hit of found) restatements.set(hit.memoryId, [...(restatements.get(hit.memoryId) ?? []), hit]);
  const byPerson = person.searched.length === 0 || lookups.usesPersonWords ? undefined : await personRanking(trx, spaces, query, person.searched, size.memories);
  if (byPerson !== undefined) rankings.push(byPerson);
  const ranked = fuseRankings(rankings, RRF_K);
  // The bridges and the continuation start from the first results: with none, there is nothing to start from.
  if (ranked.length === 0) return { ranked, plan, restatements };
  const firstTexts = firstResultTexts(trx, spaces, ranked);
  const extended = [
    await bridgeRanking(trx, spaces, query, words, firstTexts, size.memories),
    await meaningRanking(lookups.unused, firstTexts),
    // Only a subject with memories in conversations has a next memory to look up.
    size.inConversations > 0 ? await continuationRanking(trx, spaces, query, ranked[0]!.id) : undefined,
  ].filter((ranking) => ranking !== undefined);
  const fused = extended.length === 0 ? ranked : fuseRankings([...rankings, ...extended], RRF_K);
  return { ranked: await arrangeFirstResults(trx, spaces, query.text, fused), plan, restatements };
}

/**
 * Two rankings of memory ids as one, each id at the better of its two positions (ties: `own`'s first): a memory
 * ranked by its own text and by its restatements counts once, by its best evidence.
 */
function bestPositions(own: readonly number[], restated: readonly number[]): number[] {
  const position = new Map<number, number>();
  const place = (ids: readonly number[], offset: number) => {
    const seen = new Set<number>();
    for (const id of ids) {
      if (seen.has(id)) continue;
      const at = seen.size * 2 + offset;
      seen.add(id);
      position.set(id, Math.min(position.get(id) ?? Infinity, at));
    }
  };
  place(own, 0);
  place(restated, 1);
  return [...position.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
}

/** bestPositions for full-text hits: each memory once, covering what the better of its texts covers. */
function bestHits(own: readonly TextHit[], restated: readonly { id: number; coverage: number }[]): TextHit[] {
  const coverage = new Map<number, number>();
  for (const hit of [...own, ...restated]) coverage.set(hit.id, Math.max(coverage.get(hit.id) ?? 0, hit.coverage));
  return bestPositions(
    own.map((hit) => hit.id),
    restated.map((hit) => hit.id),
  ).map((id) => ({ id, score: 0, coverage: coverage.get(id)! }));
}

interface ResultText {
  readonly id: number;
  readonly text: string;
}

/**
 * The texts of the first `count` fused results, in fused order, each read from the database at most once for the
 * rankings that read them (the role bridge reads the first few, the meaning bridge more). An expired one is left out.
 */
type FirstResultTexts = (count: number) => Promise<ResultText[]>;

function firstResultTexts(trx: DbTransaction, spaces: SpaceKeys, ranked: readonly FusedItem[]): FirstResultTexts {
  // null: read, and expired since it was ranked.
  const texts = new Map<number, string | null>();
  return async (count) => {
    const first = ranked.slice(0, count).map((item) => item.id);
    const unread = first.filter((id) => !texts.has(id));
    unread.forEach((id) => texts.set(id, null));
    for (const memory of await fetchMemories(trx, spaces, unread, BRIDGE_SOURCE_CHARS)) texts.set(memory.id, memory.text);
    return first.flatMap((id) => {
      const text = texts.get(id);
      return text == null ? [] : [{ id, text }];
    });
  };
}

/** A full-text ranking for fusion: each hit's confidence is the share of the query's idf mass it covers (FULL_COVERAGE and up: 1). */
function textHitsRanking(hits: readonly TextHit[], weight: number): RetrieverRanking {
  return { ids: hits.map((hit) => hit.id), weight, confidence: hits.map((hit) => Math.min(1, hit.coverage / FULL_COVERAGE)) };
}

/**
 * A question that names a person by a word the subject's memories never use ("Who is the user's spouse?",
 * "Which relative …?") is also ranked by the words they may use instead ("partner", "husband", "wife"; "brother",
 * "aunt", …: `searched`), as a ranking of its own. When the memories do use the question's word, its full-text
 * ranking already finds them, and the other words would only bring in other people (rankMemories asks first).
 */
async function personRanking(trx: DbTransaction, spaces: SpaceKeys, query: RankingQuery, searched: readonly string[], subjectMemories: number): Promise<RetrieverRanking> {
  const hits = await textRanking(trx, spaces, query.filters, searched.join(' '), RANKING_DEPTH, subjectMemories);
  return { ids: hits.map((hit) => hit.id), weight: PERSON_WEIGHT };
}

/**
 * A question about someone by their role ("Who teaches the user's son?") reaches the facts that call that person
 * by name ("Theo's teacher is Mr Bell") through the first results that say who it is ("The user's son Theo is
 * 9"): the names written next to the role word in the best BRIDGE_SOURCES results are searched with the
 * question's words, as a third ranking. Undefined when the question names no role or no name turns up.
 */
async function bridgeRanking(
  trx: DbTransaction,
  spaces: SpaceKeys,
  query: RankingQuery,
  words: string,
  firstTexts: FirstResultTexts,
  subjectMemories: number,
): Promise<RetrieverRanking | undefined> {
  if (!asksAboutRole(query.text)) return undefined;
  const sources = await firstTexts(BRIDGE_SOURCES);
  const names = bridgeNames(query.text, sources.map((source) => source.text));
  if (names.length === 0) return undefined;
  const hits = await textRanking(trx, spaces, query.filters, `${words} ${names.join(' ')}`, RANKING_DEPTH, subjectMemories);
  return textHitsRanking(hits, BRIDGE_WEIGHT);
}

/**
 * A question that asks by a word none of the subject's memories uses ("Which herb …?") gets a ranking of the first
 * MEANING_SOURCES fused results whose words bridge it by meaning ("coriander"; meaning-bridge.ts), in their fused
 * order, at a small weight: it reorders the first results, it adds none. Undefined when every word is used or
 * nothing bridges.
 */
async function meaningRanking(unused: readonly string[], firstTexts: FirstResultTexts): Promise<RetrieverRanking | undefined> {
  if (unused.length === 0) return undefined;
  const sources = await firstTexts(MEANING_SOURCES);
  const bridged = bridgedByMeaning(unused, sources.map((source) => textWords(source.text)));
  const ids = sources.filter((_, index) => bridged[index]).map((source) => source.id);
  return ids.length === 0 ? undefined : { ids, weight: MEANING_WEIGHT };
}

/**
 * What was said right after the best match in the same conversation often completes it: an answer after a question
 * ("Melanie: What did you paint?" / "Caroline: A lake at sunrise"), a follow-up that refers back ("It took three
 * weeks"). Such a memory shares few words with a question about it, so the memory remembered next after the best
 * result with the same session_id gets a small ranking of its own. Undefined when there is none.
 */
async function continuationRanking(trx: DbTransaction, spaces: SpaceKeys, query: RankingQuery, bestId: number): Promise<RetrieverRanking | undefined> {
  const next = await nextInConversation(trx, spaces, bestId, query.filters);
  return next === undefined ? undefined : { ids: [next], weight: CONTINUATION_WEIGHT };
}
