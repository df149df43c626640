// Recall and dedup quality on the project's own development sets (bench/quality/README.md), through tools/call on
// the composed service with the local model: recall@1/5/10 per question category and split, for the served
// (hybrid) ranking and, benchmark-only, each retriever alone; then the dedup figures of remember.
// The timeline set (another user whose facts changed; now/past, two-fact and people questions) is reported by kind
// and split, two-fact questions also as "both in the top 5"; so is the fresh recall set (a third person's, written by
// a helper that read neither the code nor the other sets), and the eighth person's recall set; the eighth person's
// pairs are reported beside the other sets' and outside their "every set" rows.
// Run: npx tsx bench/quality.ts [--misses] [--recall-only | --dedup]   (BENCH_ENGINE=postgres for PostgreSQL;
// --misses lists the dev split's failures, never the hold-out's; --recall-only skips dedup, --dedup skips recall;
// --per-question FILE writes each question's served first result and hits, one line each, to compare two runs
// question by question: a change that moves cells both ways shows which questions it won and lost)
import { writeFileSync } from 'node:fs';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import {
  allFound,
  BLIND_RECALL_CATEGORIES,
  dedupFigures,
  evaluatePairSets,
  FRESH_RECALL_CATEGORIES,
  loadChangesSet,
  loadBlindRecallSet,
  loadDevSet,
  loadEighthSets,
  loadFreshRecallSet,
  loadTimelineSet,
  QUESTION_CATEGORIES,
  seed,
  seedChanges,
  seedTimeline,
  servedSearch,
  TIMELINE_CATEGORIES,
  type DedupOutcome,
  type DevPair,
  type DevQuestion,
  type TimelineFact,
} from './lib/dev-set.js';
import { componentRanking, openQualityService, RecallTally } from './lib/quality.js';

const showMisses = process.argv.includes('--misses');
const recallOnly = process.argv.includes('--recall-only');
const dedupOnly = process.argv.includes('--dedup');
const perQuestionAt = process.argv.indexOf('--per-question');
const perQuestionFile = perQuestionAt < 0 ? undefined : process.argv[perQuestionAt + 1];
const perQuestion: string[] = [];
const engine = process.env.BENCH_ENGINE === 'postgres' && BENCH_DATABASE_URL !== undefined ? 'postgres' : 'pglite';
const { facts, questions, pairSets } = loadDevSet();
const eighth = loadEighthSets();
const timeline = loadTimelineSet();
const started = performance.now();
const quality = await openQualityService(engine);
const { call, service } = quality;
console.log(
  `own development set: ${facts.length} facts, ${questions.length} questions, ${pairSets.map((set) => `${set.pairs.length} ${set.name}`).join(', ')} pairs; timeline set: ${timeline.facts.length} facts, ` +
    `${timeline.questions.length} questions; ${engine}, ${service.embedder.model}, node ${process.version}`,
);

const subject = 'dev-recall';
const tally = new RecallTally([1, 5, 10]);
const misses: string[] = [];
/**
 * Recall@k by category, by split, and by category within each split; the dev split's misses listed (at 5, and at 1
 * for now/past questions, whose answer should come first). Benchmark-only: each retriever alone, as recall runs it
 * (before fusion).
 */
async function evaluate(set: string, subject: string, items: readonly DevQuestion[], keysOf: ReadonlyMap<number, readonly string[]>, texts: ReadonlyMap<string, string>) {
  const served = servedSearch(call, subject, 10);
  const searches: [string, (query: string) => Promise<number[]>][] = [
    ['vector only', (query) => componentRanking(service, subject, query, 'vector', 10)],
    ['full-text only', (query) => componentRanking(service, subject, query, 'text', 10)],
    ['hybrid (served)', served],
  ];
  const bothAt5 = new Map<string, [number, number]>();
  for (const [name, search] of searches) {
    for (const question of items) {
      const ranked = (await search(question.question)).map((id) => keysOf.get(id) ?? ['?']);
      const columns = [question.category, question.split, `${question.category}:${question.split}`, 'all'];
      tally.add(`${set} ${name}`, columns, question.answers, ranked);
      if (name !== 'hybrid (served)') continue;
      const allAt5 = allFound(question.answers, ranked, 5);
      perQuestion.push(`${set} ${question.id} ${question.split} ${question.category} first=${ranked[0]?.join('/')} at1=${question.answers.some((id) => ranked[0]?.includes(id))} all-at5=${allAt5}`);
      for (const column of columns) {
        const [found, count] = bothAt5.get(column) ?? [0, 0];
        bothAt5.set(column, [found + (allAt5 ? 1 : 0), count + 1]);
      }
      const wanted = question.category === 'now' || question.category === 'past' ? 1 : 5;
      if (showMisses && question.split === 'dev' && !allFound(question.answers, ranked, wanted)) {
        misses.push(`${question.id} [${question.category}] ${question.question}\n    want ${question.answers.map((id) => `${id} "${texts.get(id)}"`).join(', ')}\n` +
          ranked.slice(0, 5).map(([id], index) => `    ${index + 1}. ${id} ${texts.get(id!)}`).join('\n'));
      }
    }
  }
  return bothAt5;
}
/** The tables' columns: each kind, then each split, then all questions. */
const columnsOf = (categories: readonly string[]) => [...categories.map((key) => ({ key, label: key })), { key: 'dev', label: 'dev split' }, { key: 'holdout', label: 'hold-out' }, { key: 'all', label: 'all' }];
const RANKINGS = ['vector only', 'full-text only', 'hybrid (served)'];

/** One line per kind and split of the served ranking; `both` adds the share of questions with every answer in the top 5. */
function bySplit(set: string, categories: readonly string[], both?: ReadonlyMap<string, [number, number]>): string {
  const lines = [`| ${set} (served) | ${['dev', 'holdout', 'all'].map((split) => `${split}: R@1 / R@5 / R@10${both === undefined ? '' : ' (all answers in top 5)'}`).join(' | ')} |`, '|---|---|---|---|'];
  for (const category of [...categories, 'all']) {
    const cells = ['dev', 'holdout', 'all'].map((split) => {
      const column = category === 'all' ? (split === 'all' ? 'all' : split) : split === 'all' ? category : `${category}:${split}`;
      const count = tally.count(`${set} hybrid (served)`, column);
      const figures = [1, 5, 10].map((k) => tally.mean(`${set} hybrid (served)`, column, k).toFixed(3)).join(' / ');
      const all = both?.get(column);
      return `${figures}${all === undefined ? '' : ` (${(all[0] / all[1]).toFixed(3)})`} n=${count}`;
    });
    lines.push(`| ${category} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * A set seeded as the timeline set is (its later facts stored after the others) on `subject`, evaluated and
 * reported by kind and split, two-fact questions also as every answer in the top 5.
 */
async function reportByKind(set: string, title: string, subject: string, data: { facts: TimelineFact[]; questions: DevQuestion[] }, categories: readonly string[]) {
  const keys = await seedTimeline(call, subject, data.facts);
  const bothAt5 = await evaluate(set, subject, data.questions, keys, new Map(data.facts.map((fact) => [fact.id, fact.text])));
  console.log(`\n${title}, recall@1 / @5 / @10 by kind:\n\n${tally.table(RANKINGS.map((name) => `${set} ${name}`), columnsOf(categories))}`);
  console.log(`\n${title}, served ranking by kind and split (in brackets: every answer in the top 5):\n\n${bySplit(set, categories, bothAt5)}`);
}

/** The recall figures of every set: the served ranking and each retriever alone, by kind and split. */
async function reportRecall() {
  const keyOf = await seed(call, subject, facts.map((fact) => ({ key: fact.id, text: fact.text })));
  await evaluate('own', subject, questions, new Map([...keyOf].map(([id, key]) => [id, [key]])), new Map(facts.map((fact) => [fact.id, fact.text])));
  console.log(`\nrecall@1 / @5 / @10 by question category:\n\n${tally.table(RANKINGS.map((name) => `own ${name}`), columnsOf(QUESTION_CATEGORIES))}`);
  console.log(`\nown set, served ranking by category and split:\n\n${bySplit('own', QUESTION_CATEGORIES)}`);
  await reportByKind('timeline', 'timeline set', 'dev-timeline', timeline, TIMELINE_CATEGORIES);
  await reportChanges();
  await reportByKind('fresh', 'fresh recall set', 'dev-fresh-recall', loadFreshRecallSet(), FRESH_RECALL_CATEGORIES);
  await reportByKind('blind', 'blind recall set', 'dev-blind-recall', loadBlindRecallSet(), BLIND_RECALL_CATEGORIES);
  await reportByKind('eighth', 'eighth recall set', 'dev-eighth-recall', eighth.recall, BLIND_RECALL_CATEGORIES);
  if (misses.length > 0) console.log(`\nhybrid misses at 5 (dev split):\n${misses.join('\n')}`);
}

/** The changes set (seedChanges): the served ranking's first result for each "now" and "before" question, by split. */
async function reportChanges() {
  const changes = loadChangesSet();
  const changesSubject = 'dev-changes';
  const keyOf = await seedChanges(call, changesSubject, timeline.facts, changes);
  const served = servedSearch(call, changesSubject, 5);
  const first = new Map<string, [number, number]>();
  for (const change of changes) {
    for (const [kind, question, wanted] of [['now', change.now, 'new'], ['past', change.past, 'old']] as const) {
      const top = keyOf.get((await served(question))[0] ?? -1);
      const hit = top === `${change.id}-${wanted}`;
      perQuestion.push(`changes ${change.id}-${kind} ${change.split} ${kind} first=${top} at1=${hit}`);
      const column = `${kind}:${change.split}`;
      const [found, count] = first.get(column) ?? [0, 0];
      first.set(column, [found + (hit ? 1 : 0), count + 1]);
      if (showMisses && change.split === 'dev' && !hit) misses.push(`${change.id} [changes ${kind}] ${question}\n    want ${change.id}-${wanted}, first ${top ?? 'nothing'}`);
    }
  }
  const cell = (key: string) => {
    const [found, count] = first.get(key) ?? [0, 0];
    return `${(found / count).toFixed(3)} (${found} of ${count})`;
  };
  console.log(`\nchanges set, the served ranking's first result (R@1):\n\n| question | dev | holdout |\n|---|---|---|`);
  for (const kind of ['now', 'past']) console.log(`| ${kind} | ${cell(`${kind}:dev`)} | ${cell(`${kind}:holdout`)} |`);
}

if (!dedupOnly) await reportRecall();
if (perQuestionFile !== undefined) writeFileSync(perQuestionFile, `${perQuestion.join('\n')}\n`);
if (recallOnly) {
  await quality.close();
  process.exit(0);
}

const outcomes = await evaluatePairSets(call, 'dev-dedup', facts, pairSets);
const eighthOutcomes = await evaluatePairSets(call, 'dev-dedup', facts, [eighth.pairs]);
const row = (label: string, items: readonly DedupOutcome[]) => {
  const figures = dedupFigures(items);
  return `| ${label} | ${figures.paraphrases} / ${figures.distinct} | ${figures.askRecall.toFixed(3)} | ${figures.askFirst.toFixed(3)} | ${figures.askMaxEntries} | ${figures.skipRecognised.toFixed(3)} | ${figures.distinctKept.toFixed(3)} | ${figures.distinctListed.toFixed(3)} | ${figures.repliesMissingNear} |`;
};
console.log(`\ndedup (each set on a subject of its own: ${facts.length} facts and each pair's stored text remembered first):\n`);
console.log('| set, half | pairs (paraphrase / distinct) | ask: paraphrase listed | ask: listed first | ask: most entries | skip_if_near: paraphrase recognised | skip_if_near: distinct kept apart | ask: distinct listed | skip replies saying "similar" without near_duplicates |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const set of pairSets) {
  for (const split of ['dev', 'holdout'] as const) console.log(row(`${set.name}, ${split}`, outcomes.filter((outcome) => outcome.pair.split === split && set.pairs.includes(outcome.pair))));
}
for (const split of ['dev', 'holdout'] as const) console.log(row(`**every set, ${split}**`, outcomes.filter((outcome) => outcome.pair.split === split)));
for (const split of ['dev', 'holdout'] as const) console.log(row(`eighth, ${split}`, eighthOutcomes.filter((outcome) => outcome.pair.split === split)));
if (showMisses) {
  const describe = (pair: DevPair) => `${pair.id} [${pair.variant}] "${pair.stored}" / "${pair.incoming}"`;
  for (const outcome of outcomes.filter((item) => item.pair.split === 'dev')) {
    const problems = [
      outcome.pair.kind === 'paraphrase' && outcome.askPosition === 0 ? 'ask missed it' : '',
      outcome.pair.kind === 'paraphrase' && !outcome.recognised ? (outcome.skippedAs === undefined ? 'skip_if_near stored it again' : `skip_if_near took it for ${outcome.skippedAs}`) : '',
      outcome.pair.kind === 'distinct' && outcome.skippedAs !== undefined ? `skip_if_near took it for ${outcome.skippedAs}` : '',
    ].filter((problem) => problem !== '');
    if (problems.length > 0) console.log(`  ${describe(outcome.pair)}: ${problems.join('; ')}`);
  }
}
console.log(`\n(total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
await quality.close();
