// Recall quality on LoCoMo (../shared/data/locomo10.json; see its README): every conversation turn is remembered
// by one subject per sample, then each question of categories 1–4 is recalled, and evidence recall@k =
// |gold ∩ dia_ids(top k)| / |gold| is averaged per category and overall, for vector-only, full-text-only and
// hybrid ranking, in one run, with the local embedding model. Quality does not depend on the engine (the same
// SQL runs on both); PGlite is used unless BENCH_ENGINE=postgres.
// Run: npx tsx bench/recall-quality.ts [path/to/locomo10.json]
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/open-database.js';
import { createLocalProvider } from '../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../src/embeddings/provider.js';
import { NO_FILTERS } from '../src/db/memories/filters.js';
import { fetchMemories } from '../src/db/memories/read-memories.js';
import { storedVector } from '../src/db/pgvector.js';
import { MemoryService } from '../src/memory/memory-service.js';
import { DEFAULT_EXACT_SCAN_LIMIT, rankMemories, type RecallStrategy } from '../src/memory/recall-ranking.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';

const DATA = process.argv[2] ?? new URL('../../shared/data/locomo10.json', import.meta.url).pathname;
const KS = [5, 10, 20] as const;
const STRATEGIES: RecallStrategy[] = ['vector', 'text', 'hybrid'];
const CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: string[]; category: number }[];
}

const samples = JSON.parse(readFileSync(DATA, 'utf8')) as Sample[];
const engine = process.env.BENCH_ENGINE === 'postgres' && BENCH_DATABASE_URL !== undefined ? 'postgres' : 'pglite';

// Each question is recalled once per strategy; its embedding is computed once.
const local = createLocalProvider();
await local.ready();
const cache = new Map<string, Promise<number[]>>();
const embedder: EmbeddingProvider = {
  model: local.model,
  dimensions: local.dimensions,
  embed: (texts) =>
    Promise.all(
      texts.map((text) => {
        let vector = cache.get(text);
        if (vector === undefined) {
          vector = local.embed([text]).then((vectors) => vectors[0]!);
          cache.set(text, vector);
        }
        return vector;
      }),
    ),
  ready: () => local.ready(),
  close: async () => undefined,
};

const schema = `bench_locomo_${Date.now().toString(36)}`;
const db = await openDatabase({ url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined, dataDir: 'memory://', schema, embeddingDimensions: local.dimensions });
const service = new MemoryService({ db, embedder, nearDuplicateThreshold: 0.9 });

/** Runs `work` over `items` with `concurrency` workers (concurrent embeddings are batched by the provider). */
async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let index = next++; index < items.length; index = next++) await work(items[index]!);
  }));
}

console.log(`recall quality on LoCoMo (${samples.length} samples), ${engine}, ${local.model}, node ${process.version}`);
const started = performance.now();
const diaOf = new Map<number, string>();
let turns = 0;
for (const sample of samples) {
  const subject = `locomo-${sample.sample_id}`;
  const sessionTurns = Object.keys(sample.conversation)
    .filter((key) => /^session_\d+$/.test(key))
    .flatMap((key) => (sample.conversation[key] as Turn[]).map((turn) => ({ session: key, turn })));
  await forEachConcurrently(sessionTurns, 32, async ({ session, turn }) => {
    const text = `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [shares a photo of ${turn.blip_caption}]` : ''}`;
    const outcome = await service.remember(
      subject,
      { text, tags: [session.replace('_', '-')], sourceProvider: 'locomo', importance: 0.5, captureMode: undefined, sessionId: session, expiresAt: undefined, lastConfirmedAt: undefined },
      'insert',
    );
    diaOf.set(outcome.memoryId, turn.dia_id);
  });
  turns += sessionTurns.length;
}
const stored = performance.now();
console.log(`remembered ${turns} turns in ${((stored - started) / 1000).toFixed(0)} s`);

interface Question {
  subject: string;
  question: string;
  category: number;
  gold: string[];
}
const questions: Question[] = samples.flatMap((sample) =>
  sample.qa
    .filter((qa) => qa.category >= 1 && qa.category <= 4)
    .map((qa) => ({
      subject: `locomo-${sample.sample_id}`,
      question: qa.question,
      category: qa.category,
      // Quirks (README): malformed evidence strings are split and kept only when shaped like a dia_id.
      gold: [...new Set((qa.evidence ?? []).flatMap((item) => item.split(/[;,\s]+/)).filter((item) => /^D\d+:\d+$/.test(item)))],
    })),
);
const scored = questions.filter((question) => question.gold.length > 0);

// sums[strategy][category][k]
const sums = new Map<string, number>();
const add = (key: string, value: number) => sums.set(key, (sums.get(key) ?? 0) + value);
const latency: Record<string, number[]> = {};
for (const strategy of STRATEGIES) {
  latency[strategy] = [];
  // Embed every question first (once; cached), so recall latency below excludes the model.
  if (strategy !== 'text') await forEachConcurrently(scored, 32, async (question) => void (await embedder.embed([question.question])));
  for (const question of scored) {
    const [embedding] = strategy === 'text' ? [] : await embedder.embed([question.question]);
    const query = { text: question.question, vector: embedding === undefined ? undefined : storedVector(embedding, embedder.model), filters: NO_FILTERS };
    // What recall does for one strategy: rank, then read the top 20 (recall's fusion and reading, not its wire).
    const t0 = performance.now();
    const ids = await db.withSubject(question.subject, 'benchmarking', async (trx) => {
      const { ranked } = await rankMemories(trx, question.subject, query, { strategy, exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT });
      const top = ranked.slice(0, 20).map((item) => item.id);
      await fetchMemories(trx, question.subject, top, 100_000);
      return top;
    });
    latency[strategy].push(performance.now() - t0);
    const ranked = ids.map((id) => diaOf.get(id));
    for (const k of KS) {
      const found = question.gold.filter((dia) => ranked.slice(0, k).includes(dia)).length / question.gold.length;
      add(`${strategy}|${question.category}|${k}`, found);
      add(`${strategy}|all|${k}`, found);
    }
  }
}

const counts: Record<string, number> = { all: scored.length };
for (const question of scored) counts[question.category] = (counts[question.category] ?? 0) + 1;
const cell = (strategy: string, category: string) => KS.map((k) => ((sums.get(`${strategy}|${category}|${k}`) ?? 0) / counts[category]!).toFixed(3)).join(' / ');
console.log(`\n${scored.length} questions with evidence (categories 1-4); evidence recall@5 / @10 / @20:\n`);
console.log(`| ranking | ${[1, 2, 3, 4].map((c) => `${c} ${CATEGORIES[c]} (${counts[c]})`).join(' | ')} | overall (${counts.all}) | recall ms p50 |`);
console.log(`|---|${[1, 2, 3, 4].map(() => '---').join('|')}|---|---|`);
for (const strategy of STRATEGIES) {
  const sorted = [...latency[strategy]!].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`| ${strategy} | ${[1, 2, 3, 4].map((c) => cell(strategy, String(c))).join(' | ')} | ${cell(strategy, 'all')} | ${p50.toFixed(1)} |`);
}
console.log(`\n(recall ms: one recall of 20, query embedding excluded; total run ${((performance.now() - started) / 1000).toFixed(0)} s)`);

if (engine === 'postgres') await db.withAllSubjects('inspecting rows', (trx) => sql`drop schema ${sql.id(schema)} cascade`.execute(trx));
await db.close();
await local.close();
