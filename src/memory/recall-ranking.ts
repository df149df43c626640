import { fetchMemories } from '../db/memories/read-memories.js';
import type { MemoryFilters, MemoryRecord } from '../db/memories/records.js';
import { gatherFirstEvidence, type RecallQuestion } from '../db/memories/recall-plan.js';
import type { RestatementHit } from '../db/memories/restatement-ranking.js';
import type { VectorPlan } from '../db/memories/vector-ranking.js';
import type { StoredVector } from '../db/pgvector.js';
import type { DbTransaction } from '../db/schema.js';
import type { SpaceKeys } from '../db/memories/filters.js';
import { arrangeFirstResults, type ResultsWanted } from './arrange-results.js';
import { dictionaryWords } from './meaning-bridge.js';
import { alternativeWords, contentWords, meaningCandidates, personWords } from './query-analysis.js';
import { withBridgedAnswer } from './recall-coverage.js';
import { namingUser } from './self-names.js';
import { fuseRankings, type FusedItem, type Ranking as RetrieverRanking } from './rank-fusion.js';
import {
  bridgeRanking,
  bridgeSearch,
  bridgeStatement,
  continuationRetriever,
  firstTextsWanted,
  meaningRetriever,
  personRetriever,
  textRetriever,
  vectorRetriever,
  type FirstResultTexts,
  type RetrieverContext,
} from './retrievers.js';

/**
 * Reciprocal rank fusion's k (rank-fusion.ts), measured with the retrievers' weights (retrievers.ts): a small k
 * lets the top of each list count.
 */
const RRF_K = 35;
/** How much of each first result's text the retrievers that read them (bridge, meaning) read. */
const FIRST_TEXT_CHARS = 2000;

export interface RankingQuery {
  readonly text: string;
  /** The names the user goes by in the memories (self-names.ts); none when not given. */
  readonly selfNames?: SelfNamesOfQuery;
  readonly vector: StoredVector;
  readonly filters: MemoryFilters;
}

/**
 * The names the user goes by: those known, read as the user in the question's words (the caller embeds the question
 * so too), and, when due, a space's latest texts to learn them from again, read with the rankings, whose names then
 * weigh the versions of a fact.
 */
export interface SelfNamesOfQuery {
  readonly known: readonly string[];
  readonly toLearn: SelfNamesToLearn | undefined;
}

/** A space whose latest texts (`count`, `chars` of each) say the user's names, and what makes names of them. */
export interface SelfNamesToLearn {
  readonly space: string;
  readonly count: number;
  readonly chars: number;
  readonly learn: (texts: readonly string[]) => string[];
}

export interface Ranking {
  /** Every ranked id, best first, with its fused score in (0, 1]. */
  readonly ranked: readonly FusedItem[];
  /** How the vector ranking ran. */
  readonly plan: VectorPlan;
  /** The restatements that matched, by memory id, nearest first. */
  readonly restatements: ReadonlyMap<number, readonly RestatementHit[]>;
  /** The first `limit` ranked memories still stored, as recall shows them (read with the arrangement). */
  readonly records: ReadonlyMap<number, MemoryRecord>;
}

/**
 * The subject's memories ranked for `query` (README, "Ranking"): the retrievers that start from the question
 * (vector, full text, person) run as the planner says (db/memories/recall-plan.ts) and are fused; those that start
 * from the first fused results (bridge, meaning, continuation) add their rankings and everything is fused again
 * (the bridge's answer, a fact about the person a role or a later clause names, then gets a place among the first:
 * withBridgedAnswer);
 * then the first results are arranged in time and spread (arrange-results.ts), reading the `results` recall shows
 * in the same statement. Runs inside the caller's subject-scoped transaction.
 */
export async function rankMemories(
  trx: DbTransaction,
  spaces: SpaceKeys,
  query: RankingQuery,
  options: { readonly exactScanLimit: number; readonly results: ResultsWanted },
): Promise<Ranking> {
  const known = query.selfNames?.known ?? [];
  const toLearn = query.selfNames?.toLearn;
  // "Where does Tomasz work?" asked by Tomasz is "Where does the user work?": found in "I work …" as in "Tomasz works …".
  const asked = namingUser(query.text, known);
  const words = contentWords(asked);
  const person = personWords(asked);
  const question: RecallQuestion = {
    vector: query.vector,
    filters: query.filters,
    words,
    alternatives: alternativeWords(asked),
    meaningWords: dictionaryWords(meaningCandidates(asked)),
    personWords: person.asked,
    personSearched: person.searched,
    firstTexts: { count: (lookups) => firstTextsWanted(asked, lookups.unused), chars: FIRST_TEXT_CHARS },
    ...(toLearn === undefined ? {} : { latestTexts: { space: toLearn.space, count: toLearn.count, chars: toLearn.chars } }),
  };
  const evidence = await gatherFirstEvidence(trx, spaces, question, options);
  const selfNames = toLearn === undefined ? known : toLearn.learn(evidence.latestTexts ?? []);
  const context: RetrieverContext = { trx, spaces, filters: query.filters, memories: evidence.memories };
  const restatements = new Map<number, RestatementHit[]>();
  for (const hit of evidence.restatements) restatements.set(hit.memoryId, [...(restatements.get(hit.memoryId) ?? []), hit]);
  const fromQuestion = [vectorRetriever(evidence), textRetriever(evidence), personRetriever(evidence)].filter((ranking) => ranking !== undefined);
  const ranked = fuseRankings(fromQuestion, RRF_K);
  // The others start from the first results: with none, there is nothing to start from.
  if (ranked.length === 0) return { ranked, plan: evidence.plan, restatements, records: new Map() };
  const firstTexts = firstResultTexts(trx, spaces, ranked, evidence.texts);
  const bridgeSearched = await bridgeSearch(asked, words, firstTexts);
  const meaning = await meaningRetriever(evidence.lookups.unused, firstTexts);
  const continuation = await continuationRetriever(context, ranked[0]!.id, evidence);
  const rankWith = (bridge: RetrieverRanking | undefined): FusedItem[] => {
    const fromResults = [bridge, meaning, continuation].filter((ranking): ranking is RetrieverRanking => ranking !== undefined);
    const fusedAgain = fromResults.length === 0 ? ranked : fuseRankings([...fromQuestion, ...fromResults], RRF_K);
    // The bridge answers what the question asks about the person it names: its answer gets a place among the first.
    return bridge === undefined ? fusedAgain : withBridgedAnswer(fusedAgain, bridge.ids);
  };
  // The bridge's search runs in the results' statement: its hits make the ranking final there.
  const bridge = bridgeSearched === undefined ? undefined : bridgeStatement(context, bridgeSearched);
  const arranged = await arrangeFirstResults(
    trx,
    spaces,
    { text: query.text, selfNames },
    rankWith(undefined),
    options.results,
    bridge === undefined ? undefined : { search: bridge.statement, rank: (hits) => rankWith(hits.length === 0 ? undefined : bridgeRanking(hits)), searchAlone: bridge.alone },
  );
  return { ...arranged, plan: evidence.plan, restatements };
}

/**
 * FirstResultTexts over `ranked`: the texts read with the rankings (`read`), and any other read from the database
 * at most once for the retrievers that read them (the bridge reads the first few, the meaning bridge more). An
 * expired one is left out.
 */
function firstResultTexts(trx: DbTransaction, spaces: SpaceKeys, ranked: readonly FusedItem[], read: ReadonlyMap<number, string>): FirstResultTexts {
  // null: read, and expired since it was ranked.
  const texts = new Map<number, string | null>(read);
  return async (count) => {
    const first = ranked.slice(0, count).map((item) => item.id);
    const unread = first.filter((id) => !texts.has(id));
    unread.forEach((id) => texts.set(id, null));
    for (const memory of await fetchMemories(trx, spaces, unread, FIRST_TEXT_CHARS)) texts.set(memory.id, memory.text);
    return first.flatMap((id) => {
      const text = texts.get(id);
      return text == null ? [] : [{ id, text }];
    });
  };
}
