// One subject holding 100k memories, without the model (synthetic vectors, bench/lib/synthetic-embedder.ts):
// recall from it and remember into it through the whole stack (server in its own process, closed loop, one
// client), and whether the near-duplicate check, which walks the HNSW index for a subject this large, finds
// what the exact scan finds.
// Run: npx tsx bench/heavy-subject.ts [secondsPerCell=10] [memories=100000] [checks=200]
// BENCH_ENGINES=postgres (or pglite) picks one engine; BENCH_SEED_SCHEMA names the PostgreSQL seed schema.
import { openDatabase } from '../src/db/open-database.js';
import { findNearMemories } from '../src/db/memories/near-memories.js';
import { storedVector } from '../src/db/pgvector.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../src/embeddings/local-provider.js';
import { DEFAULT_EXACT_SCAN_LIMIT } from '../src/db/memories/recall-plan.js';
import { benchConfig } from './lib/bench-config.js';
import { BENCH_DATABASE_URL, benchEngines } from './lib/bench-server.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { startServerChild } from './lib/server-child.js';
import { formatRow, summarise } from './lib/stats.js';
import { memoryText, queryText, syntheticVector } from './lib/synthetic-embedder.js';

const seconds = Number(process.argv[2] ?? 10);
const memories = Number(process.argv[3] ?? 100_000);
const checks = Number(process.argv[4] ?? 200);
const engines = process.env.BENCH_ENGINES === undefined ? benchEngines : benchEngines.filter((engine) => process.env.BENCH_ENGINES!.split(',').includes(engine));
/** remember's own candidate search (src/memory/memory-service.ts): NearDuplicateThreshold − 0.15, 20 rows. */
const CANDIDATE_MARGIN = 0.15;
const NEAR_CANDIDATES = 20;

console.log(`heavy subject: ${memories} memories in one subject, ${seconds} s per cell, node ${process.version}`);
for (const engine of engines) {
  const seeded = await seededDatabase(engine, memories);
  const server = await startServerChild({ embedder: 'synthetic', env: seeded.env });
  try {
    const heavy = await server.token(HEAVY_SUBJECT);
    await callTool(server.mcpUrl, heavy, 'recall', { query: queryText(0) });
    await callTool(server.mcpUrl, heavy, 'remember', { text: memoryText(3_000_000) });
    const recall = await runFor(seconds, 1, async (index) => {
      await callTool(server.mcpUrl, heavy, 'recall', { query: queryText(index) });
    });
    console.log(formatRow(`${engine} recall from the 100k subject c=1`, recall));
    const remember = await runFor(seconds, 1, async (index) => {
      await callTool(server.mcpUrl, heavy, 'remember', { text: memoryText(2_000_000 + index) });
    });
    console.log(formatRow(`${engine} remember into the 100k subject c=1`, remember));
    // The same text again (skip_if_near) must be recognised as already stored: its own row is found.
    let recognised = 0;
    for (let i = 0; i < checks; i++) {
      const answer = await callTool(server.mcpUrl, heavy, 'remember', { text: memoryText((i * 7919) % memories), dedup_policy: 'skip_if_near' });
      if (answer.message === 'Already remembered') recognised++;
    }
    console.log(`${engine} a seeded text remembered again (skip_if_near): recognised ${recognised} of ${checks}`);
  } finally {
    await server.close();
  }

  // The candidate lists of remember's near-duplicate check, by the index walk and by the exact scan, for texts
  // new to the subject (about a person it already holds ~400 memories of) and for seeded texts.
  const config = benchConfig(seeded.env.MEMORY_SERVICE_DATA_DIR!, seeded.env);
  const threshold = config.memory.nearDuplicateThreshold;
  const db = await openDatabase({
    url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined,
    dataDir: config.database.dataDir,
    schema: config.database.schema,
    embeddingDimensions: LOCAL_MODEL_DIMENSIONS,
  });
  try {
    let sameList = 0;
    let sameAboveThreshold = 0;
    let overlap = 0;
    const walkMs: number[] = [];
    const exactMs: number[] = [];
    for (let i = 0; i < checks; i++) {
      const text = i % 2 === 0 ? memoryText(4_000_000 + i) : memoryText((i * 104_729) % memories);
      const vector = storedVector(syntheticVector(text), LOCAL_MODEL_NAME);
      const timed = async <T>(times: number[], work: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        const result = await work();
        times.push(performance.now() - t0);
        return result;
      };
      const [walked, exact] = await db.withSubject(HEAVY_SUBJECT, 'benchmarking', async (trx) => [
        await timed(walkMs, () => findNearMemories(trx, HEAVY_SUBJECT, vector, threshold - CANDIDATE_MARGIN, NEAR_CANDIDATES, DEFAULT_EXACT_SCAN_LIMIT, { text })),
        await timed(exactMs, () => findNearMemories(trx, HEAVY_SUBJECT, vector, threshold - CANDIDATE_MARGIN, NEAR_CANDIDATES, Number.POSITIVE_INFINITY, { text })),
      ]);
      const ids = (rows: typeof walked, min = -1) => rows.filter((row) => row.similarity >= min).map((row) => row.id).join(',');
      if (ids(walked) === ids(exact)) sameList++;
      if (ids(walked, threshold) === ids(exact, threshold)) sameAboveThreshold++;
      const exactIds = new Set(exact.map((row) => row.id));
      overlap += exact.length === 0 ? 1 : walked.filter((row) => exactIds.has(row.id)).length / exact.length;
    }
    console.log(
      `${engine} near-duplicate candidates, index walk vs exact scan, ${checks} vectors (threshold ${threshold}): ` +
        `identical lists ${sameList}/${checks}, identical at or above the threshold ${sameAboveThreshold}/${checks}, mean overlap ${(overlap / checks).toFixed(3)}`,
    );
    const walk = summarise(walkMs, 1);
    const scan = summarise(exactMs, 1);
    console.log(
      `${engine} the candidate search alone (same transactions, alternating): index walk p50 ${walk.p50.toFixed(1)} ms p95 ${walk.p95.toFixed(1)} ms, ` +
        `exact scan p50 ${scan.p50.toFixed(1)} ms p95 ${scan.p95.toFixed(1)} ms, ratio of p50s ${(scan.p50 / walk.p50).toFixed(1)}×`,
    );
  } finally {
    await db.close();
  }
}
