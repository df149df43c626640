// Recall and dedup quality on the project's own development sets (bench/quality/README.md), through tools/call on
// the composed service with the local model: recall@1/5/10 per question category and split, for the served
// (hybrid) ranking and, benchmark-only, each retriever alone; then the dedup figures of remember.
// Run: npx tsx bench/quality.ts [--misses] [--dedup]   (BENCH_ENGINE=postgres for PostgreSQL; --misses lists the dev
// split's failures, never the hold-out's; --dedup skips the recall figures)
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { dedupFigures, evaluatePairSets, loadDevSet, QUESTION_CATEGORIES, seed, servedSearch, type DedupOutcome, type DevPair } from './lib/dev-set.js';
import { componentRanking, openQualityService, RecallTally } from './lib/quality.js';
import type { RecallStrategy } from '../src/memory/recall-ranking.js';

const showMisses = process.argv.includes('--misses');
const dedupOnly = process.argv.includes('--dedup');
const engine = process.env.BENCH_ENGINE === 'postgres' && BENCH_DATABASE_URL !== undefined ? 'postgres' : 'pglite';
const { facts, questions, pairSets } = loadDevSet();
const started = performance.now();
const quality = await openQualityService(engine);
const { call, service } = quality;
console.log(`own development set: ${facts.length} facts, ${questions.length} questions, ${pairSets.map((set) => `${set.pairs.length} ${set.name}`).join(', ')} pairs; ${engine}, ${service.embedder.model}, node ${process.version}`);

if (!dedupOnly) {
  const subject = 'dev-recall';
  const keyOf = await seed(call, subject, facts.map((fact) => ({ key: fact.id, text: fact.text })));
  const textOf = new Map(facts.map((fact) => [fact.id, fact.text]));

  // Benchmark-only: one retriever alone, through recall's own ranking code.
  const component = (strategy: RecallStrategy) => (query: string) => componentRanking(service, subject, query, strategy, 10);
  const rankings: [string, (query: string) => Promise<number[]>][] = [
    ['vector only', component('vector')],
    ['full-text only', component('text')],
    ['hybrid (served)', servedSearch(call, subject, 10)],
  ];
  const tally = new RecallTally([1, 5, 10]);
  const misses: string[] = [];
  for (const [name, search] of rankings) {
    for (const question of questions) {
      const ranked = (await search(question.question)).map((id) => [keyOf.get(id) ?? '?']);
      tally.add(name, [question.category, question.split, 'all'], question.answers, ranked);
      if (showMisses && name === 'hybrid (served)' && question.split === 'dev' && tally.ks.length > 0) {
        const top5 = new Set(ranked.slice(0, 5).flat());
        if (!question.answers.every((answer) => top5.has(answer))) {
          misses.push(`${question.id} [${question.category}] ${question.question}\n    want ${question.answers.map((id) => `${id} "${textOf.get(id)}"`).join(', ')}\n` +
            ranked.slice(0, 5).map(([id], index) => `    ${index + 1}. ${id} ${textOf.get(id!)}`).join('\n'));
        }
      }
    }
  }
  const columns = [...QUESTION_CATEGORIES.map((key) => ({ key, label: key })), { key: 'dev', label: 'dev split' }, { key: 'holdout', label: 'hold-out' }, { key: 'all', label: 'all' }];
  console.log(`\nrecall@1 / @5 / @10 by question category:\n\n${tally.table(rankings.map(([name]) => name), columns)}`);
  if (misses.length > 0) console.log(`\nhybrid misses at 5 (dev split):\n${misses.join('\n')}`);
}

const { outcomes, storedId } = await evaluatePairSets(call, 'dev-dedup', facts, pairSets);
const row = (label: string, items: readonly DedupOutcome[]) => {
  const figures = dedupFigures(items, storedId);
  return `| ${label} | ${figures.paraphrases} / ${figures.distinct} | ${figures.askRecall.toFixed(3)} | ${figures.askFirst.toFixed(3)} | ${figures.askMaxEntries} | ${figures.skipRecognised.toFixed(3)} | ${figures.distinctKept.toFixed(3)} | ${figures.distinctListed.toFixed(3)} | ${figures.repliesMissingNear} |`;
};
console.log(`\ndedup (each set on a subject of its own: ${facts.length} facts and each pair's stored text remembered first):\n`);
console.log('| set, half | pairs (paraphrase / distinct) | ask: paraphrase listed | ask: listed first | ask: most entries | skip_if_near: paraphrase recognised | skip_if_near: distinct kept apart | ask: distinct listed | skip replies saying "similar" without near_duplicates |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const set of pairSets) {
  for (const split of ['dev', 'holdout'] as const) console.log(row(`${set.name}, ${split}`, outcomes.filter((outcome) => outcome.pair.split === split && set.pairs.includes(outcome.pair))));
}
for (const split of ['dev', 'holdout'] as const) console.log(row(`**every set, ${split}**`, outcomes.filter((outcome) => outcome.pair.split === split)));
if (showMisses) {
  const describe = (pair: DevPair) => `${pair.id} [${pair.variant}] "${pair.stored}" / "${pair.incoming}"`;
  for (const outcome of outcomes.filter((item) => item.pair.split === 'dev')) {
    const problems = [
      outcome.pair.kind === 'paraphrase' && outcome.askPosition === 0 ? 'ask missed it' : '',
      outcome.pair.kind === 'paraphrase' && outcome.skippedAs !== storedId.get(outcome.pair.id) ? 'skip_if_near stored it again' : '',
      outcome.pair.kind === 'distinct' && outcome.skippedAs !== undefined ? `skip_if_near took it for ${outcome.skippedAs}` : '',
    ].filter((problem) => problem !== '');
    if (problems.length > 0) console.log(`  ${describe(outcome.pair)}: ${problems.join('; ')}`);
  }
}
console.log(`\n(total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
await quality.close();
