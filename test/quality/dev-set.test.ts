import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allFound, dedupFigures, evaluatePairSets, loadBlindRecallSet, loadChangesSet, loadDevSet, loadFreshRecallSet, loadTimelineSet, seed, seedChanges, seedTimeline, servedSearch } from '../../bench/lib/dev-set.js';
import { RecallTally, type CallTool } from '../../bench/lib/quality.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Quality on the project's own development sets (bench/quality/README.md) with the local model, through the
 * served tools: recall's ranking and remember's near-duplicate handling must not fall below these floors.
 * bench/quality.ts prints the same figures per category, set and half.
 *
 * The quality issue's target of recall@5 ≥ 0.97 is not reached with the local model (0.923, bench/README.md,
 * "Recall and dedup quality"), so that floor is the level reached: any drop fails. The dedup floors hold the
 * held-out halves, which no rule was tuned on, a little below what they reach (bench/README.md, "Dedup with the
 * candidate's similarity", and "The same values, reworded"): ask lists every paraphrase and skip_if_near keeps
 * every distinct fact apart, and recognises 0.859 of the paraphrases (55 of 64), just above issue 37's 0.85. The
 * fresh pairs, written by someone who had not read the decision's code, and the blind, Callum and Dara pairs,
 * written the same way later, hold floors of their own at the level their held-out halves reach together
 * (INDEPENDENT_FLOORS), far lower: that gap is the decision's overfitting, measured.
 */
const FLOORS = {
  /** Hybrid recall@5 over every question (dev and hold-out splits); target 0.97. */
  recallAt5: 0.915,
  /** Paraphrase pairs whose stored memory `ask` lists in near_duplicates (target 0.95). */
  askRecall: 0.95,
  /** Paraphrase pairs that `skip_if_near` recognises (returns the stored memory's id); target 0.85. */
  skipRecognised: 0.84,
  /** Close-but-distinct facts that `skip_if_near` stores as memories of their own; target 0.90. */
  distinctKept: 0.95,
  /**
   * The timeline set (bench/quality/README.md), at the level reached (bench/README.md, "Time, coverage and
   * relations"); the targets are 0.80 for "now" questions at 1 and 0.85 for two-fact questions with both
   * answers in the top 5.
   */
  nowAt1: 0.56,
  pastAt1: 0.52,
  twoFactBothAt5: 0.7,
  /**
   * The changes set (bench/quality/README.md), both halves: the newer text first for the question about now (23 of
   * 32 reached, 21 before a later version of the first result was looked for below the time window), the older one
   * for the question about before (17 of 32).
   */
  changesNowAt1: 0.7,
  changesPastAt1: 0.5,
  /**
   * The fresh recall set (bench/quality/README.md), written by someone who had not read the code: recall@5 over
   * both halves, a little below the 0.877 reached (bench/README.md, "The user in a question").
   */
  freshRecallAt5: 0.85,
  /** The blind recall set, written the same way later: a little below the 0.783 reached (bench/README.md). */
  blindRecallAt5: 0.75,
};

/**
 * The held-out halves of the fresh, blind, Callum and Dara pairs, each written by a helper who had read neither the
 * code nor the other sets (bench/README.md, "Values written in words, codes spaced otherwise"): together ask 0.936,
 * recognised 0.545, distinct kept 0.900.
 */
const INDEPENDENT_FLOORS = { askRecall: 0.9, skipRecognised: 0.5, distinctKept: 0.85 };
const INDEPENDENT_SETS = new Set(['fresh', 'blind', 'callum', 'dara']);

const { facts, questions, pairSets } = loadDevSet();
const timeline = loadTimelineSet();
const freshRecall = loadFreshRecallSet();
const blindRecall = loadBlindRecallSet();
const changes = loadChangesSet();

describe.each(engines)('development-set quality on %s', (engine) => {
  let server: TestServer;
  let call: CallTool;

  beforeAll(async () => {
    // Hundreds of calls a minute by one subject: the per-subject rate limit is not under test here.
    server = await startTestServer({ engine, env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0' } });
    const tokens = new Map<string, string>();
    call = async (subject, name, args) => {
      if (!tokens.has(subject)) tokens.set(subject, await server.token(subject));
      const { isError, structured } = await server.call(tokens.get(subject)!, name, args);
      if (isError) throw new Error(`${name} failed: ${JSON.stringify(structured)}`);
      return structured;
    };
  });
  afterAll(async () => {
    await server.close();
  });

  it(`recalls the answers of ${questions.length} questions in the top 5 (recall@5 ≥ ${FLOORS.recallAt5})`, { timeout: 300_000 }, async () => {
    const subject = 'quality-recall';
    const keyOf = await seed(call, subject, facts.map((fact) => ({ key: fact.id, text: fact.text })));
    const search = servedSearch(call, subject, 5);
    const tally = new RecallTally([5]);
    for (const question of questions) {
      const ranked = (await search(question.question)).map((id) => [keyOf.get(id) ?? '?']);
      tally.add('hybrid', [question.category, 'all'], question.answers, ranked);
    }
    expect(tally.count('hybrid', 'all')).toBe(questions.length);
    expect(tally.mean('hybrid', 'all', 5)).toBeGreaterThanOrEqual(FLOORS.recallAt5);
  });

  it(`puts what holds now (or held before, when asked) first and both facts of a two-fact question in the top 5 (timeline set)`, { timeout: 300_000 }, async () => {
    const keysOf = await seedTimeline(call, 'quality-timeline', timeline.facts);
    const search = servedSearch(call, 'quality-timeline', 5);
    const found = new Map<string, number[]>();
    for (const question of timeline.questions.filter((item) => ['now', 'past', 'twofact'].includes(item.category))) {
      const ranked = (await search(question.question)).map((id) => keysOf.get(id) ?? ['?']);
      found.set(question.category, [...(found.get(question.category) ?? []), allFound(question.answers, ranked, question.category === 'twofact' ? 5 : 1) ? 1 : 0]);
    }
    const share = (category: string) => found.get(category)!.reduce((sum, value) => sum + value, 0) / found.get(category)!.length;
    expect(share('now')).toBeGreaterThanOrEqual(FLOORS.nowAt1);
    expect(share('past')).toBeGreaterThanOrEqual(FLOORS.pastAt1);
    expect(share('twofact')).toBeGreaterThanOrEqual(FLOORS.twoFactBothAt5);
  });

  it('puts the newer text of a changed fact first asked about now, and the older one asked about before (changes set)', { timeout: 300_000 }, async () => {
    const keyOf = await seedChanges(call, 'quality-changes', timeline.facts, changes);
    const search = servedSearch(call, 'quality-changes', 5);
    const firstIs = async (question: string, key: string) => keyOf.get((await search(question))[0] ?? -1) === key;
    let now = 0;
    let past = 0;
    for (const change of changes) {
      if (await firstIs(change.now, `${change.id}-new`)) now++;
      if (await firstIs(change.past, `${change.id}-old`)) past++;
    }
    expect(now / changes.length).toBeGreaterThanOrEqual(FLOORS.changesNowAt1);
    expect(past / changes.length).toBeGreaterThanOrEqual(FLOORS.changesPastAt1);
  });

  it.each([
    ['fresh', FLOORS.freshRecallAt5, freshRecall],
    ['blind', FLOORS.blindRecallAt5, blindRecall],
  ] as const)(`recalls the %s recall set's answers in the top 5 (recall@5 ≥ %s)`, { timeout: 300_000 }, async (name, floor, set) => {
    const subject = `quality-${name}-recall`;
    const keysOf = await seedTimeline(call, subject, set.facts);
    const search = servedSearch(call, subject, 5);
    const tally = new RecallTally([5]);
    for (const question of set.questions) {
      tally.add('hybrid', ['all'], question.answers, (await search(question.question)).map((id) => keysOf.get(id) ?? ['?']));
    }
    expect(tally.count('hybrid', 'all')).toBe(set.questions.length);
    expect(tally.mean('hybrid', 'all', 5)).toBeGreaterThanOrEqual(floor);
  });

  // Every set's held-out half (bench/quality/README.md), which no rule was tuned on, on a subject per set.
  const heldOut = pairSets.map((set) => ({ name: set.name, pairs: set.pairs.filter((pair) => pair.split === 'holdout') }));
  const heldOutCount = heldOut.reduce((sum, set) => sum + set.pairs.length, 0);
  it(`lists paraphrases under ask, recognises them under skip_if_near and keeps distinct facts apart (${heldOutCount} held-out pairs)`, { timeout: 600_000 }, async () => {
    const outcomes = await evaluatePairSets(call, 'quality-dedup', facts, heldOut);
    expect(outcomes).toHaveLength(heldOutCount);
    const independent = new Set(heldOut.filter((set) => INDEPENDENT_SETS.has(set.name)).flatMap((set) => set.pairs));
    for (const [figures, floors] of [
      [dedupFigures(outcomes.filter((outcome) => !independent.has(outcome.pair))), FLOORS],
      [dedupFigures(outcomes.filter((outcome) => independent.has(outcome.pair))), INDEPENDENT_FLOORS],
    ] as const) {
      expect(figures.askMaxEntries).toBeLessThanOrEqual(5);
      expect(figures.askRecall).toBeGreaterThanOrEqual(floors.askRecall);
      expect(figures.skipRecognised).toBeGreaterThanOrEqual(floors.skipRecognised);
      expect(figures.distinctKept).toBeGreaterThanOrEqual(floors.distinctKept);
      // Every reply whose message says similar memories exist carries them.
      expect(figures.repliesMissingNear).toBe(0);
    }
  });
});
