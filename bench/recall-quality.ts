// Recall quality on LoCoMo (../shared/data/locomo10.json; see its README), through tools/call on the composed
// service with the local model. Two ways of filling the memory, one subject per sample, each remembered one at a
// time in the conversation's order (the samples at once):
//  - turns: every conversation turn remembered as "<speaker>: <text>" (with its image caption), keeping its dia_id,
//    tagged with its session and with the session as its session_id;
//  - observations: every `observation` fact of the set (2,541, written about the speakers), keeping its dia_id(s).
// Then every question of categories 1–4 with evidence is recalled (limit 20) and evidence recall@k =
// |gold ∩ dia_ids(top k)| / |gold| is averaged per category and overall, for the served (hybrid) ranking and,
// benchmark-only, for each retriever alone (before fusion); and the served ranking for each half of the set (the
// first five samples, to tune on, and the other five, reported untouched).
// Run: npx tsx bench/recall-quality.ts [turns|observations ...] [--fresh] [--data path/to/locomo10.json]
// The seeded PGlite database is kept under bench/.data/ between runs of the same storage code (migrations, model);
// --fresh seeds anew (figures for bench/README.md come from a fresh run). BENCH_ENGINE=postgres seeds a fresh schema.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { seed } from './lib/dev-set.js';
import { LOCOMO_DATA, sessionsOf, turnText } from './lib/locomo.js';
import { componentRanking, openQualityService, RecallTally, type Retriever } from './lib/quality.js';

const args = process.argv.slice(2);
const dataArg = args.indexOf('--data');
const DATA = dataArg >= 0 ? args[dataArg + 1]! : LOCOMO_DATA;
const fresh = args.includes('--fresh');
const sets = (['turns', 'observations'] as const).filter((set) => args.includes(set));
if (sets.length === 0) sets.push('turns', 'observations');
const engine = process.env.BENCH_ENGINE === 'postgres' && BENCH_DATABASE_URL !== undefined ? 'postgres' : 'pglite';
const CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const STRATEGIES: [string, Retriever | 'hybrid'][] = [['vector only', 'vector'], ['full-text only', 'text'], ['hybrid (served)', 'hybrid']];

interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  observation: Record<string, Record<string, [string, string | string[]][]>>;
  qa: { question: string; evidence?: string[]; category: number }[];
}
interface Item {
  key: string;
  text: string;
  tags: string[];
  /** The conversation's session it comes from, as an agent passes its conversation's id. */
  sessionId: string;
  diaIds: string[];
}

const samples = JSON.parse(readFileSync(DATA, 'utf8')) as Sample[];
// Quirks (README): malformed evidence strings are split and kept only when shaped like a dia_id.
const diaIds = (values: readonly string[]) => [...new Set(values.flatMap((value) => value.split(/[;,\s]+/)).filter((value) => /^D\d+:\d+$/.test(value)))];

function itemsOf(sample: Sample, set: 'turns' | 'observations'): Item[] {
  if (set === 'turns') {
    return sessionsOf(sample.conversation).flatMap(({ session, turns }) =>
      turns.map((turn) => ({ key: turn.dia_id, text: turnText(turn), tags: [session.replace('_', '-')], sessionId: session, diaIds: [turn.dia_id] })),
    );
  }
  return Object.entries(sample.observation).flatMap(([session, speakers]) =>
    Object.values(speakers).flatMap((facts) =>
      facts.map(([text, dia], index) => ({
        key: `${session}#${index}`,
        text,
        tags: [session.replace(/_observation$/, '').replace('_', '-')],
        sessionId: session.replace(/_observation$/, ''),
        diaIds: diaIds(Array.isArray(dia) ? dia : [dia]),
      })),
    ),
  );
}

/** What the stored rows depend on: the schema's migrations, the model, how a text's vectors are made, and this recipe. */
function storageVersion(model: string, set: string): string {
  const hash = createHash('sha256').update(`${model}|${set}|${DATA}|v3`);
  const migrations = new URL('../src/db/migrations/', import.meta.url).pathname;
  for (const file of readdirSync(migrations).sort()) hash.update(readFileSync(join(migrations, file)));
  hash.update(readFileSync(new URL('../src/memory/passages.ts', import.meta.url)));
  return hash.digest('hex').slice(0, 12);
}

/**
 * The set's two halves, by sample: a change is tuned on the first five conversations and the other five are
 * reported untouched (bench/README.md), as every other quality set is split.
 */
const HALVES = { dev: 'served, dev half (samples 1-5)', holdout: 'served, held-out half (samples 6-10)' } as const;
const halfOf = (sample: Sample): keyof typeof HALVES => (samples.indexOf(sample) < samples.length / 2 ? 'dev' : 'holdout');

const questions = samples.flatMap((sample) =>
  sample.qa
    .filter((qa) => qa.category >= 1 && qa.category <= 4)
    .map((qa) => ({ subject: `locomo-${sample.sample_id}`, question: qa.question, category: String(qa.category), gold: diaIds(qa.evidence ?? []), half: halfOf(sample) }))
    .filter((question) => question.gold.length > 0),
);

for (const set of sets) {
  const started = performance.now();
  const cacheDir = engine === 'pglite' ? new URL(`./.data/locomo-${set}-${storageVersion('local', set)}`, import.meta.url).pathname : undefined;
  const mapFile = cacheDir === undefined ? undefined : join(cacheDir, 'dia-ids.json');
  // The map is written last: without it the folder is a seeding that did not finish.
  if (cacheDir !== undefined && (fresh || !existsSync(mapFile!))) rmSync(cacheDir, { recursive: true, force: true });
  const cached = mapFile !== undefined && existsSync(mapFile);
  const quality = await openQualityService(engine, cacheDir);
  const { call, service } = quality;
  console.log(`\nLoCoMo ${set}: ${samples.length} samples, ${engine}, ${service.embedder.model}, node ${process.version}${cached ? ' (seeded database reused)' : ''}`);

  let diaOf = new Map<number, string[]>();
  if (cached) {
    diaOf = new Map(JSON.parse(readFileSync(mapFile, 'utf8')) as [number, string[]][]);
  } else {
    let count = 0;
    // Each conversation is remembered in its order, as an agent would; the ten conversations at once.
    await Promise.all(
      samples.map(async (sample) => {
        const items = itemsOf(sample, set);
        const byKey = new Map(items.map((item) => [item.key, item]));
        const keyOf = await seed(call, `locomo-${sample.sample_id}`, items, { inOrder: true });
        for (const [memoryId, key] of keyOf) diaOf.set(memoryId, byKey.get(key)!.diaIds);
        count += items.length;
      }),
    );
    if (mapFile !== undefined) writeFileSync(mapFile, JSON.stringify([...diaOf]));
    console.log(`remembered ${count} ${set} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }

  const tally = new RecallTally([5, 10, 20]);
  const latency: number[] = [];
  for (const [name, strategy] of STRATEGIES) {
    for (const question of questions) {
      let ids: number[];
      if (strategy === 'hybrid') {
        const t0 = performance.now();
        const result = await call(question.subject, 'recall', { query: question.question, limit: 20, max_chars: 100_000 });
        latency.push(performance.now() - t0);
        ids = (result.memories as { memory_id: number }[]).map((memory) => memory.memory_id);
      } else {
        // Benchmark-only: one retriever alone, as recall runs it, before fusion.
        ids = await componentRanking(service, question.subject, question.question, strategy, 20);
      }
      const found = ids.map((id) => diaOf.get(id) ?? []);
      tally.add(name, [question.category, 'all'], question.gold, found);
      if (strategy === 'hybrid') tally.add(HALVES[question.half], [question.category, 'all'], question.gold, found);
    }
  }
  const columns = [...[1, 2, 3, 4].map((category) => ({ key: String(category), label: `${category} ${CATEGORIES[category]}` })), { key: 'all', label: 'overall' }];
  latency.sort((a, b) => a - b);
  console.log(`\n${questions.length} questions with evidence (categories 1-4); evidence recall@5 / @10 / @20 over ${set}:\n`);
  console.log(tally.table(STRATEGIES.map(([name]) => name), columns));
  const halfCounts = Object.keys(HALVES).map((half) => `${half} ${questions.filter((question) => question.half === half).length}`).join(', ');
  console.log(`\nthe served ranking by half (questions: ${halfCounts}; the header counts the dev half's):\n\n${tally.table(Object.values(HALVES), columns)}`);
  console.log(`\n(served recall of 20 through tools/call, query embedding included: p50 ${latency[Math.floor(latency.length / 2)]!.toFixed(1)} ms; ${set} total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  await quality.close();
}
