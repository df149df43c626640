import { continuationOf } from '../db/memories/conversation.js';
import { RANKING_DEPTH, type FirstEvidence } from '../db/memories/recall-plan.js';
import type { MemoryFilters } from '../db/memories/records.js';
import { textRanking, textRankingQuery, type TextHit, type TextRankingStatement } from '../db/memories/text-ranking.js';
import type { SpaceKeys } from '../db/memories/filters.js';
import type { DbTransaction } from '../db/schema.js';
import { bridgedByMeaning } from './meaning-bridge.js';
import { asksAboutRole, bridgeNames, contentWords, referredNames, referringClause, textWords } from './query-analysis.js';
import type { Ranking } from './rank-fusion.js';

/**
 * Recall's retrievers. Each finds memories by one kind of evidence and ranks them; rankMemories fuses their
 * rankings, each with its weight (its say in the fusion). The first three start from the question alone (the
 * planner, db/memories/recall-plan.ts, runs the vector and full-text rankings and the person retriever's look-up);
 * the last three from the first fused results. Weights measured on
 * LoCoMo turns and observations and the development sets (bench/README.md, "Recall and dedup quality").
 */
export const RETRIEVER_WEIGHTS = {
  /**
   * The nearest memories by embedding (a memory by its nearest passage or restatement too, and a conversation's
   * turn read with the turn before it: db/memories/vector-ranking.ts, withTurnsRead).
   */
  vector: 1,
  /** The full-text ranking: names, dates, numbers and rare words; weighs more, as far as a hit covers the question. */
  text: 1.75,
  /** Other words for the person a question asks about, when the memories never use its word ("spouse" → "wife"). */
  person: 0.75,
  /** The names the first results give the role a question asks about ("the user's son" → "Theo"), searched. */
  bridge: 1,
  /** A nudge, within the first results, for those naming a kind of what the question asks by meaning ("herb" → "coriander"). */
  meaning: 0.2,
  /** What was said next in the best result's conversation: at 0.4 and above it cost a LoCoMo cell (open-domain). */
  continuation: 0.3,
} as const;

export type RetrieverName = keyof typeof RETRIEVER_WEIGHTS;

/**
 * A full-text hit whose matching words carry less than FULL_COVERAGE of the question's idf mass is scaled down in
 * proportion (a shared "user", "work" or modal verb beside the question's real subject); one at or above it counts
 * fully.
 */
const FULL_COVERAGE = 0.4;
/** How many of the first fused results may name the person a role question asks about. */
export const BRIDGE_SOURCES = 3;
/** How many of the first fused results the meaning bridge reads. */
export const MEANING_SOURCES = 30;

/** The vector retriever: each memory at the better of its own text's and its restatements' positions. */
export function vectorRetriever(evidence: Pick<FirstEvidence, 'nearest' | 'restatements'>): Ranking {
  const nearer = evidence.restatements.filter((hit) => hit.distance !== undefined && hit.distance < (hit.memoryDistance ?? 2)).map((hit) => hit.memoryId);
  return { ids: bestPositions(evidence.nearest, nearer), weight: RETRIEVER_WEIGHTS.vector };
}

/** The full-text retriever: each memory once, covering what the better of its own text and its restatements covers. */
export function textRetriever(evidence: Pick<FirstEvidence, 'worded' | 'restatements'>): Ranking {
  const restated = evidence.restatements.filter((hit) => hit.coverage > 0).sort((a, b) => b.coverage - a.coverage);
  const coverage = new Map<number, number>();
  for (const hit of [...evidence.worded, ...restated.map((hit) => ({ id: hit.memoryId, coverage: hit.coverage }))]) {
    coverage.set(hit.id, Math.max(coverage.get(hit.id) ?? 0, hit.coverage));
  }
  const ids = bestPositions(
    evidence.worded.map((hit) => hit.id),
    restated.map((hit) => hit.memoryId),
  );
  return coveredRanking(ids.map((id) => ({ id, coverage: coverage.get(id)! })), RETRIEVER_WEIGHTS.text);
}

/** What the retrievers that read the database are asked with. */
export interface RetrieverContext {
  readonly trx: DbTransaction;
  readonly spaces: SpaceKeys;
  readonly filters: MemoryFilters;
  /** The subject's number of memories (sizes a full-text ranking). */
  readonly memories: number;
}

/**
 * The person retriever: a question that names a person by a word the subject's memories never use ("Who is the
 * user's spouse?", "Which relative …?") is ranked by the words they may use instead ("partner", "husband", "wife";
 * "brother", "aunt", …: personWords' `searched`), which the planner ranks by full text when the memories use
 * none of the asked words (FirstEvidence's `person`): when they use one, the question's own full-text ranking finds
 * them, and the other words would only bring in others. Undefined when that ranking did not run.
 */
export function personRetriever(evidence: Pick<FirstEvidence, 'person'>): Ranking | undefined {
  return evidence.person === undefined ? undefined : { ids: evidence.person.map((hit) => hit.id), weight: RETRIEVER_WEIGHTS.person };
}

/**
 * How many of the first fused results' texts the bridge and meaning retrievers will read for `question`, given the
 * question's words none of the memories uses (`unused`): 0 when neither runs. The planner reads them with the
 * rankings.
 */
export function firstTextsWanted(question: string, unused: readonly string[]): number {
  if (unused.length > 0) return MEANING_SOURCES;
  return bridgeAsked(question) ? BRIDGE_SOURCES : 0;
}

/** Whether the bridge retriever runs for `question`: it asks about a role, or a later clause refers back. */
function bridgeAsked(question: string): boolean {
  return asksAboutRole(question) || referringClause(question) !== undefined;
}

/** A first result's text (see FirstResultTexts). */
export interface ResultText {
  readonly id: number;
  readonly text: string;
}

/** The texts of the first `count` fused results, in fused order (each read at most once by rankMemories). */
export type FirstResultTexts = (count: number) => Promise<ResultText[]>;

/**
 * The bridge retriever: a question about someone by their role ("Who teaches the user's son?") reaches the facts
 * that call that person by name ("Theo's teacher is Mr Bell") through the first results that say who it is ("The
 * user's son Theo is 9"): the names written next to the role word in the best BRIDGE_SOURCES results are searched
 * with the question's words (`words`). So does a question whose later clause refers back to the person its first
 * clause finds ("Who is Leon's sister, and who is she married to?"), by the names the best result gives
 * (referredNames) with that clause's words. Undefined when the question does neither or no name turns up.
 */
export async function bridgeRetriever(context: RetrieverContext, question: string, words: string, firstTexts: FirstResultTexts): Promise<Ranking | undefined> {
  const searched = await bridgeSearch(question, words, firstTexts);
  return searched === undefined ? undefined : bridgeRanking(await bridgeStatement(context, searched).alone());
}

/**
 * What the bridge retriever searches by full text for `question`: the names its first results give, with the
 * question's words or those of its later clause; undefined when it does not run or no name turns up. recall reads
 * the search with its results (arrange-results.ts), so that it adds no round trip.
 */
export async function bridgeSearch(question: string, words: string, firstTexts: FirstResultTexts): Promise<string | undefined> {
  if (!bridgeAsked(question)) return undefined;
  const clause = referringClause(question);
  const sources = (await firstTexts(BRIDGE_SOURCES)).map((source) => source.text);
  const names = [...new Set([...bridgeNames(question, sources), ...referredNames(question, sources)])];
  if (names.length === 0) return undefined;
  // A clause that refers back asks its own fact about the person: its words alone go with the names.
  const searched = clause === undefined ? words : contentWords(clause);
  return `${searched} ${names.join(' ')}`;
}

/** The bridge's search, as a statement to run with recall's results (arrange-results.ts) and run alone. */
export function bridgeStatement(context: RetrieverContext, searched: string): { readonly statement: TextRankingStatement; readonly alone: () => Promise<TextHit[]> } {
  return {
    statement: textRankingQuery(context.spaces, context.filters, searched, RANKING_DEPTH, context.memories),
    alone: () => textRanking(context.trx, context.spaces, context.filters, searched, RANKING_DEPTH, context.memories),
  };
}

/** The bridge retriever's ranking of its search's hits. */
export function bridgeRanking(hits: readonly Pick<TextHit, 'id' | 'coverage'>[]): Ranking {
  return coveredRanking(hits, RETRIEVER_WEIGHTS.bridge);
}

/**
 * The meaning retriever: a question that asks by words none of the subject's memories uses (`unused`: "Which herb
 * …?") ranks those of the first MEANING_SOURCES fused results whose words bridge one by meaning ("coriander";
 * meaning-bridge.ts), in their fused order, at a small weight: it reorders the first results, it adds none.
 * Undefined when every word is used or nothing bridges.
 */
export async function meaningRetriever(unused: readonly string[], firstTexts: FirstResultTexts): Promise<Ranking | undefined> {
  if (unused.length === 0) return undefined;
  const sources = await firstTexts(MEANING_SOURCES);
  const bridged = bridgedByMeaning(unused, sources.map((source) => textWords(source.text)));
  const ids = sources.filter((_, index) => bridged[index]).map((source) => source.id);
  return ids.length === 0 ? undefined : { ids, weight: RETRIEVER_WEIGHTS.meaning };
}

/**
 * The continuation retriever: what was said right after the best match in the same conversation often completes it
 * (an answer after a question, "Melanie: What did you paint?" / "Caroline: A lake at sunrise"; a follow-up that
 * refers back, "It took three weeks") and shares few words with a question about it: the memory remembered next
 * after the best result with the same session_id, and after a short one ("Wow, what did you paint?") the next after
 * that too (db/memories/conversation.ts, Continuation). Undefined when there is none, or the subject has no memory
 * in a conversation (`inConversations`, so nothing is looked up).
 */
export async function continuationRetriever(
  context: RetrieverContext,
  bestId: number,
  evidence: Pick<FirstEvidence, 'inConversations' | 'continuations'>,
): Promise<Ranking | undefined> {
  if (evidence.inConversations === 0) return undefined;
  // Read with the rankings when the best result was among their first few (recall-plan.ts), else now.
  const said = evidence.continuations.has(bestId) ? (evidence.continuations.get(bestId) ?? undefined) : await continuationOf(context.trx, context.spaces, bestId, context.filters);
  return said === undefined ? undefined : { ids: said.after === undefined ? [said.next] : [said.next, said.after], weight: RETRIEVER_WEIGHTS.continuation };
}

/** A full-text ranking for fusion: each hit's confidence is the share of the question it covers (FULL_COVERAGE and up: 1). */
function coveredRanking(hits: readonly Pick<TextHit, 'id' | 'coverage'>[], weight: number): Ranking {
  return { ids: hits.map((hit) => hit.id), weight, confidence: hits.map((hit) => Math.min(1, hit.coverage / FULL_COVERAGE)) };
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
