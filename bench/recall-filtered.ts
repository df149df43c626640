// Filtered recall against exact search: at 100k memories, subjects and filters of very different selectivity
// (0.1 % to 30 % of the table) are ranked by the service's vector plan (exact scan for small candidate sets,
// HNSW with pgvector's iterative scan for large ones) and by an exact scan, and the two are compared. For
// contrast, the same filtered query on the HNSW index without iterative scan (what a plain "ORDER BY distance
// LIMIT k" with a WHERE gives) is measured too.
// Run: npx tsx bench/recall-filtered.ts [queries per case=50]
import { sql } from 'kysely';
import { openDatabase } from '../src/db/open-database.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../src/embeddings/local-provider.js';
import { NO_FILTERS as noFilters } from '../src/db/memories/filters.js';
import type { MemoryFilters } from '../src/db/memories/records.js';
import { subjectSize } from '../src/db/memories/subject-stats.js';
import { vectorConditions, vectorRanking } from '../src/db/memories/vector-ranking.js';
import { cosineDistance, indexedCosineDistance, storedVector } from '../src/db/pgvector.js';
import { DEFAULT_EXACT_SCAN_LIMIT } from '../src/db/memories/recall-plan.js';
import { BENCH_DATABASE_URL, benchEngines } from './lib/bench-server.js';
import { seedSubjects } from './lib/seed-subjects.js';
import { manifoldVector } from './lib/manifold-vectors.js';
import { summarise } from './lib/stats.js';

const perCase = Number(process.argv[2] ?? 50);
const DEPTH = 50;
const DIMS = LOCAL_MODEL_DIMENSIONS;

const cases: { name: string; subject: string; filters: MemoryFilters; rows: number }[] = [
  { name: 'tiny subject (0.1 %)', subject: 'tiny', filters: noFilters, rows: 100 },
  { name: 'tiny subject + tag (0.05 %)', subject: 'tiny', filters: { ...noFilters, tags: ['even'] }, rows: 50 },
  { name: 'mid subject (5 %)', subject: 'mid', filters: noFilters, rows: 5000 },
  { name: 'big subject + rare tag (0.3 %)', subject: 'big', filters: { ...noFilters, tags: ['rare'] }, rows: 300 },
  { name: 'big subject + common tag (15 %)', subject: 'big', filters: { ...noFilters, tags: ['common'] }, rows: 15_000 },
  { name: 'big subject (30 %)', subject: 'big', filters: noFilters, rows: 30_000 },
];

console.log(`filtered recall vs exact search: 100k memories, ${perCase} queries per case, top ${DEPTH}, exact scan up to ${DEFAULT_EXACT_SCAN_LIMIT} candidates, node ${process.version}`);
for (const engine of benchEngines) {
  // The tiny subject talks about topics 200-255; the queries ask about topics 0-49, where the others talk.
  const seeded = await seedSubjects(engine, [
    { subject: 'tiny', count: 100, topic: (i) => 200 + (i % 56), tags: (i) => (i % 2 === 0 ? ['even'] : []) },
    { subject: 'mid', count: 5000, topic: (i) => i % 50 },
    { subject: 'big', count: 30_000, topic: (i) => i % 50, tags: (i) => [...(i % 2 === 0 ? ['common'] : []), ...(i % 100 === 0 ? ['rare'] : [])] },
    ...Array.from({ length: 324 }, (_, i) => ({ subject: `user-${i}`, count: 200, topic: (j: number) => (i + j) % 50 })),
    { subject: 'user-324', count: 100 },
  ], manifoldVector);
  console.log(`\n${engine}: seeded in ${seeded.insertSeconds.toFixed(0)} s, HNSW index built in ${seeded.indexSeconds.toFixed(0)} s\n`);
  const db = await openDatabase({
    url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined,
    dataDir: 'memory://',
    schema: seeded.schema,
    embeddingDimensions: DIMS,
    migrate: false,
    pglite: seeded.pglite,
  });
  console.log('| case | candidates | plan | recall@10 | recall@50 | p50 ms | p95 ms | plain HNSW rows returned | plain HNSW recall@50 |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const testCase of cases) {
    const plans = new Set<string>();
    const latencies: number[] = [];
    let recall10 = 0;
    let recall50 = 0;
    let plainRows = 0;
    let plainRecall = 0;
    for (let q = 0; q < perCase; q++) {
      const vector = storedVector(manifoldVector(`query about topic ${q % 50} number ${q}`), LOCAL_MODEL_NAME);
      const where = vectorConditions(testCase.subject, testCase.filters, vector);
      const exact = await db.withSubject(testCase.subject, 'benchmarking', async (trx) => {
        const { rows } = await sql<{ id: string }>`select id from memories where ${where} order by ${cosineDistance(vector)}, id desc limit ${DEPTH}`.execute(trx);
        return rows.map((row) => Number(row.id));
      });
      const t0 = performance.now();
      const ranked = await db.withSubject(testCase.subject, 'benchmarking', async (trx) =>
        vectorRanking(trx, testCase.subject, testCase.filters, vector, DEPTH, {
          exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT,
          size: await subjectSize(trx, testCase.subject),
        }),
      );
      latencies.push(performance.now() - t0);
      plans.add(ranked.plan);
      recall10 += ranked.ids.slice(0, 10).filter((id) => exact.slice(0, 10).includes(id)).length / Math.min(10, exact.length);
      recall50 += ranked.ids.filter((id) => exact.includes(id)).length / exact.length;
      const plain = await db.withSubject(testCase.subject, 'benchmarking', async (trx) => {
        await sql`select set_config('hnsw.iterative_scan', 'off', true), set_config('enable_sort', 'off', true)`.execute(trx);
        const { rows } = await sql<{ id: string }>`
          select id from memories where ${where} order by ${indexedCosineDistance(vector)} limit ${DEPTH}`.execute(trx);
        return rows.map((row) => Number(row.id));
      });
      plainRows += plain.length;
      plainRecall += plain.filter((id) => exact.includes(id)).length / exact.length;
    }
    const latency = summarise(latencies, 1);
    console.log(
      `| ${testCase.name} | ${testCase.rows} | ${[...plans].join('+')} | ${(recall10 / perCase).toFixed(3)} | ${(recall50 / perCase).toFixed(3)} | ${latency.p50.toFixed(1)} | ${latency.p95.toFixed(1)} | ${(plainRows / perCase).toFixed(1)} | ${(plainRecall / perCase).toFixed(3)} |`,
    );
  }
  await db.close();
  await seeded.close();
}
