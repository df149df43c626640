// The project's own development sets (bench/quality/, see its README), evaluated through tools/call: used by
// bench/quality.ts, which prints the figures, and by test/quality/dev-set.test.ts, which holds them to targets.
import { readFileSync } from 'node:fs';
import { forEachConcurrently, type CallTool } from './quality.js';

export interface DevFact {
  readonly id: string;
  readonly text: string;
}
/** `dev`: the half tuned on; `holdout`: the half reported untouched. */
export type Split = 'dev' | 'holdout';
export interface DevQuestion {
  readonly id: string;
  readonly category: string;
  readonly question: string;
  readonly answers: readonly string[];
  readonly split: Split;
}
export interface DevPair {
  readonly id: string;
  readonly kind: 'paraphrase' | 'distinct';
  readonly variant: string;
  readonly stored: string;
  readonly incoming: string;
  readonly split: Split;
}

const read = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../quality/${name}`, import.meta.url), 'utf8')) as T;

/** A set of dedup pairs, evaluated on a subject of its own so that its stored texts are no candidates for another's. */
export interface PairSet {
  readonly name: string;
  readonly pairs: readonly DevPair[];
}

/**
 * `pairSets`: the first pairs, the later spot check, the pairs in other styles, and the fresh, blind, Callum and Dara
 * pairs, each written by a helper who had read neither the decision's code nor the other sets
 * (bench/quality/README.md).
 */
export function loadDevSet(): { facts: DevFact[]; questions: DevQuestion[]; pairSets: PairSet[] } {
  return {
    facts: read('facts.json'),
    questions: read('questions.json'),
    pairSets: [
      { name: 'pairs', pairs: read('pairs.json') },
      { name: 'spot', pairs: read('spot-pairs.json') },
      { name: 'styles', pairs: read('style-pairs.json') },
      { name: 'fresh', pairs: read('fresh-pairs.json') },
      { name: 'blind', pairs: read('blind-pairs.json') },
      { name: 'callum', pairs: read('callum-pairs.json') },
      { name: 'dara', pairs: read('dara-pairs.json') },
    ],
  };
}

/** Every set's pairs seeded (the facts as background) on a subject of its own and evaluated: all outcomes, and pair id → stored memory id. */
export async function evaluatePairSets(call: CallTool, subjectPrefix: string, facts: readonly DevFact[], pairSets: readonly PairSet[]): Promise<DedupOutcome[]> {
  const outcomes: DedupOutcome[] = [];
  for (const set of pairSets) {
    const subject = `${subjectPrefix}-${set.name}`;
    outcomes.push(...(await evaluateDedup(call, subject, set.pairs, await seedDedup(call, subject, facts, set.pairs))));
  }
  return outcomes;
}

export const QUESTION_CATEGORIES = ['paraphrase', 'nowords', 'relation', 'firstperson', 'date', 'number', 'negation'] as const;

/** A fact of the timeline set: `stored: 'later'` is remembered after the others; `same_as`: the fact it tells again. */
export interface TimelineFact extends DevFact {
  readonly stored?: 'later';
  readonly same_as?: string;
}

/**
 * The timeline set (bench/quality/README.md): another user whose facts changed over time, asked about now and
 * before, about people by their roles, and questions that need two facts.
 */
export function loadTimelineSet(): { facts: TimelineFact[]; questions: DevQuestion[] } {
  return { facts: read('timeline-facts.json'), questions: read('timeline-questions.json') };
}

/**
 * The fresh recall set (bench/quality/README.md): a third person's facts and questions in the kinds of the
 * independent check, written by a helper that read neither the code nor the other sets.
 */
export function loadFreshRecallSet(): { facts: TimelineFact[]; questions: DevQuestion[] } {
  return { facts: read('fresh-recall-facts.json'), questions: read('fresh-recall-questions.json') };
}

/**
 * The blind recall set (bench/quality/README.md): a fourth person's facts, many of which changed, and questions
 * about now and before, relations and two facts, written by a helper that read neither the code nor the other sets.
 */
export function loadBlindRecallSet(): { facts: TimelineFact[]; questions: DevQuestion[] } {
  return { facts: read('blind-timeline-facts.json'), questions: read('blind-timeline-questions.json') };
}

/**
 * The eighth person's sets (bench/quality/README.md), written on 2026-12-02 by helpers that read nothing of the
 * project: dedup pairs and a recall set in the blind recall set's kinds (BLIND_RECALL_CATEGORIES), each split in
 * halves. Only bench/quality.ts reports them, apart from the other sets, so that test/quality/dev-set.test.ts's
 * floors stay on the sets they were set on.
 */
export function loadEighthSets(): { pairs: PairSet; recall: { facts: TimelineFact[]; questions: DevQuestion[] } } {
  return {
    pairs: { name: 'eighth', pairs: read('eighth-pairs.json') },
    recall: { facts: read('eighth-recall-facts.json'), questions: read('eighth-recall-questions.json') },
  };
}

export const BLIND_RECALL_CATEGORIES = ['now', 'past', 'twofact', 'relation', 'paraphrase'] as const;

export const FRESH_RECALL_CATEGORIES = ['now', 'past', 'relation', 'twofact', 'paraphrase', 'firstperson', 'detail', 'negation'] as const;

/**
 * The changes set (bench/quality/README.md): a fact that changed, as the older and the newer text, with a question
 * about now and one about before.
 */
export interface ChangedFact {
  readonly id: string;
  readonly old: string;
  readonly new: string;
  readonly now: string;
  readonly past: string;
  readonly split: 'dev' | 'holdout';
}

export function loadChangesSet(): ChangedFact[] {
  return read('changes.json');
}

/**
 * Seeds the changes set as `subject`: the first 60 timeline facts (another life's, with changes of their own), then
 * every older text, then every newer one; memory_id → its key (a timeline fact's id, or "<change id>-old" / "-new").
 */
export async function seedChanges(call: CallTool, subject: string, timelineFacts: readonly TimelineFact[], changes: readonly ChangedFact[]): Promise<Map<number, string>> {
  const keyOf = new Map<number, string>();
  const older = [...timelineFacts.slice(0, 60).map((fact) => ({ key: fact.id, text: fact.text })), ...changes.map((change) => ({ key: `${change.id}-old`, text: change.old }))];
  for (const batch of [older, changes.map((change) => ({ key: `${change.id}-new`, text: change.new }))]) {
    for (const [id, key] of await seed(call, subject, batch)) keyOf.set(id, key);
  }
  return keyOf;
}

export const TIMELINE_CATEGORIES = ['now', 'past', 'twofact', 'people'] as const;

/**
 * Seeds the timeline set as `subject`: the facts marked later after all the others, so that they are stored
 * later. memory_id → the keys it counts as (its own id, and the fact it tells again).
 */
export async function seedTimeline(call: CallTool, subject: string, facts: readonly TimelineFact[]): Promise<Map<number, string[]>> {
  const keysOf = new Map<number, string[]>();
  for (const later of [false, true]) {
    const batch = facts.filter((fact) => (fact.stored === 'later') === later);
    const keyOf = await seed(call, subject, batch.map((fact) => ({ key: fact.id, text: fact.text })));
    const sameAs = new Map(batch.map((fact) => [fact.id, fact.same_as]));
    for (const [memoryId, key] of keyOf) keysOf.set(memoryId, [key, ...[sameAs.get(key) ?? []].flat()]);
  }
  return keysOf;
}

/** Whether every answer is among the first `k` results (a two-fact question is answered only with both). */
export function allFound(answers: readonly string[], ranked: readonly (readonly string[])[], k: number): boolean {
  const top = new Set(ranked.slice(0, k).flat());
  return answers.every((answer) => top.has(answer));
}

/**
 * Remembers every text (dedup_policy insert, so each is stored) as `subject`; memory_id → key. `inOrder`: one at a
 * time, so that the subject's memories are stored in the items' order, as a conversation's are.
 */
export async function seed(
  call: CallTool,
  subject: string,
  items: readonly { key: string; text: string; tags?: string[]; sessionId?: string }[],
  options: { readonly inOrder?: boolean } = {},
): Promise<Map<number, string>> {
  const keyOf = new Map<number, string>();
  await forEachConcurrently(items, options.inOrder === true ? 1 : 16, async (item) => {
    const result = await call(subject, 'remember', {
      text: item.text,
      dedup_policy: 'insert',
      ...(item.tags === undefined ? {} : { tags: item.tags }),
      ...(item.sessionId === undefined ? {} : { session_id: item.sessionId }),
    });
    keyOf.set(result.memory_id as number, item.key);
  });
  return keyOf;
}

/** The served ranking: the recall tool's memory ids, best first. */
export function servedSearch(call: CallTool, subject: string, limit: number) {
  return async (query: string): Promise<number[]> => {
    const result = await call(subject, 'recall', { query, limit, max_chars: 100_000 });
    return (result.memories as { memory_id: number }[]).map((memory) => memory.memory_id);
  };
}

export interface DedupOutcome {
  readonly pair: DevPair;
  /** Under ask: the stored memory is among near_duplicates (1-based position, or 0), and how many were listed. */
  readonly askPosition: number;
  readonly askEntries: number;
  /** Under skip_if_near: the id returned when nothing was inserted (undefined when it inserted). */
  readonly skippedAs: number | undefined;
  /**
   * Under skip_if_near: matched to the pair's stored memory, or to another memory of the very same text (a
   * background fact that is the pair's stored text too, or another pair's stored text that is this incoming one).
   */
  readonly recognised: boolean;
  /** Under skip_if_near: whether the reply's message speaks of similar memories while near_duplicates is absent. */
  readonly skipReplyMissingNear: boolean;
}

/**
 * For each pair, with the stored text already remembered as `subject` (storedId): remembers the incoming text
 * under ask, then under skip_if_near, forgetting whatever either inserted so the next pair meets the same
 * memories. Sequential, so no pair sees another's incoming text.
 */
export async function evaluateDedup(call: CallTool, subject: string, pairs: readonly DevPair[], storedId: ReadonlyMap<string, number>): Promise<DedupOutcome[]> {
  const outcomes: DedupOutcome[] = [];
  for (const pair of pairs) {
    const stored = storedId.get(pair.id)!;
    const asked = await call(subject, 'remember', { text: pair.incoming, dedup_policy: 'ask' });
    const near = (asked.near_duplicates as { memory_id: number }[] | undefined) ?? [];
    await call(subject, 'forget', { memory_id: asked.memory_id });
    const skip = await call(subject, 'remember', { text: pair.incoming, dedup_policy: 'skip_if_near' });
    const skipped = skip.message === 'Already remembered';
    if (!skipped) await call(subject, 'forget', { memory_id: skip.memory_id });
    outcomes.push({
      pair,
      askPosition: near.findIndex((item) => item.memory_id === stored) + 1,
      askEntries: near.length,
      skippedAs: skipped ? (skip.memory_id as number) : undefined,
      recognised: skipped && (skip.memory_id === stored || skip.matched_text === pair.stored || skip.matched_text === pair.incoming),
      skipReplyMissingNear: /similar memor/.test(String(skip.message)) && skip.near_duplicates === undefined,
    });
  }
  return outcomes;
}

export interface DedupFigures {
  readonly paraphrases: number;
  readonly distinct: number;
  /** Share of paraphrase pairs whose stored memory is in near_duplicates under ask. */
  readonly askRecall: number;
  /** Share of paraphrase pairs whose stored memory is listed first. */
  readonly askFirst: number;
  readonly askMaxEntries: number;
  /** Share of paraphrase pairs that skip_if_near recognised (returned the stored memory's id). */
  readonly skipRecognised: number;
  /** Distinct pairs whose incoming fact skip_if_near did not store. */
  readonly distinctLost: number;
  /** Share of distinct pairs whose incoming fact skip_if_near stored as a memory of its own. */
  readonly distinctKept: number;
  /** Distinct pairs whose stored memory ask listed (useful: same topic). */
  readonly distinctListed: number;
  readonly repliesMissingNear: number;
}

export function dedupFigures(outcomes: readonly DedupOutcome[]): DedupFigures {
  const paraphrases = outcomes.filter((outcome) => outcome.pair.kind === 'paraphrase');
  const distinct = outcomes.filter((outcome) => outcome.pair.kind === 'distinct');
  const share = (items: readonly DedupOutcome[], test: (outcome: DedupOutcome) => boolean) => (items.length === 0 ? NaN : items.filter(test).length / items.length);
  return {
    paraphrases: paraphrases.length,
    distinct: distinct.length,
    askRecall: share(paraphrases, (outcome) => outcome.askPosition > 0),
    askFirst: share(paraphrases, (outcome) => outcome.askPosition === 1),
    askMaxEntries: Math.max(0, ...outcomes.map((outcome) => outcome.askEntries)),
    skipRecognised: share(paraphrases, (outcome) => outcome.recognised),
    distinctLost: distinct.filter((outcome) => outcome.skippedAs !== undefined).length,
    distinctKept: share(distinct, (outcome) => outcome.skippedAs === undefined),
    distinctListed: share(distinct, (outcome) => outcome.askPosition > 0),
    repliesMissingNear: outcomes.filter((outcome) => outcome.skipReplyMissingNear).length,
  };
}

/**
 * Seeds the dedup subject: every fact of the set as background, then each pair's stored text, once however many
 * pairs share it; pair id → memory id.
 */
export async function seedDedup(call: CallTool, subject: string, facts: readonly DevFact[], pairs: readonly DevPair[]): Promise<Map<string, number>> {
  await seed(call, subject, facts.map((fact) => ({ key: fact.id, text: fact.text })));
  const keyOf = await seed(call, subject, [...new Set(pairs.map((pair) => pair.stored))].map((text) => ({ key: text, text })));
  const memoryOf = new Map([...keyOf].map(([memoryId, text]) => [text, memoryId]));
  return new Map(pairs.map((pair) => [pair.id, memoryOf.get(pair.stored)!]));
}
