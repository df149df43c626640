// The SQL of one recall and one remember for the subject holding 100k memories, statement by statement, on
// PostgreSQL, under the settings the service runs them with (its own withSubject: row-level security, the
// subject setting, the statement timeout): how many round trips each call makes, each statement's client-side
// time, and, for one call of each, every statement's EXPLAIN (ANALYZE, BUFFERS). Synthetic vectors, no model.
// Run: npx tsx bench/sql-profile.ts [calls=100] [memories=100000]   (BENCH_SEED_SCHEMA names the seed schema)
import pg from 'pg';
import { openDatabase } from '../src/db/open-database.js';
import { MemoryService } from '../src/memory/memory-service.js';
import { LOCAL_MODEL_DIMENSIONS } from '../src/embeddings/local-provider.js';
import { benchConfig } from './lib/bench-config.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { summarise } from './lib/stats.js';
import { memoryText, queryText, syntheticEmbedder } from './lib/synthetic-embedder.js';

const calls = Number(process.argv[2] ?? 100);
/** How long after each call its background statements are waited for (and counted apart from the call's). */
const AFTER_ANSWER_MS = 20;
const memories = Number(process.argv[3] ?? 100_000);
if (BENCH_DATABASE_URL === undefined) throw new Error('set TEST_DATABASE_URL (PostgreSQL only)');

interface Statement {
  readonly text: string;
  readonly ms: number;
}

/**
 * Every statement the service sends, as pg sees it; with `explain` set, its plan first (run in the same
 * transaction). A statement written while another awaits its answer (pipelined: src/db/guarded-pool.ts) shares
 * its round trip; `trips` counts the others.
 */
const recorder = { statements: [] as Statement[], explain: false, plans: [] as string[], inFlight: 0, trips: 0 };
type QueryConfig = { text: string; values?: unknown[] } & Record<string, unknown>;
const clientQuery = pg.Client.prototype.query as (this: pg.Client, config: QueryConfig, ...rest: unknown[]) => Promise<pg.QueryResult>;
(pg.Client.prototype as unknown as { query: typeof clientQuery }).query = async function (this: pg.Client, config: QueryConfig, ...rest: unknown[]) {
  // Other call shapes (the seeding's query(text, values)) pass through untouched.
  if (typeof config !== 'object' || typeof config.text !== 'string') return clientQuery.call(this, config, ...rest);
  const text = config.text.trim().replace(/\s+/g, ' ');
  // A statement the service prepares starts with a comment (src/db/prepared.ts); its plan is asked unprepared.
  const statement = text.replace(/^\/\*.*?\*\/\s*/, '');
  if (recorder.explain && /^(select|with|insert|update|delete)\b/i.test(statement) && !/^select set_config/i.test(statement)) {
    const plan = await clientQuery.call(this, { text: `explain (analyze, buffers, costs off) ${config.text}`, values: config.values ?? [] });
    const lines = plan.rows.map((row: Record<string, string>) => row['QUERY PLAN']!.replace(/'\[[-\d.e,]+\]'/g, "'[…]'"));
    recorder.plans.push(`-- ${text.slice(0, 160)}\n${lines.join('\n')}`);
  }
  const t0 = performance.now();
  if (recorder.inFlight++ === 0) recorder.trips += 1;
  try {
    return await clientQuery.call(this, config);
  } finally {
    recorder.inFlight -= 1;
    recorder.statements.push({ text, ms: performance.now() - t0 });
  }
};

const seeded = await seededDatabase('postgres', memories);
const config = benchConfig(seeded.env.MEMORY_SERVICE_DATA_DIR!, seeded.env);
const db = await openDatabase({
  url: BENCH_DATABASE_URL,
  dataDir: config.database.dataDir,
  schema: config.database.schema,
  embeddingDimensions: LOCAL_MODEL_DIMENSIONS,
  poolSize: 1,
});
// Recall counts written right after each answer (not WRITE_DELAY_MS later, recall-counts.ts), so that each call's
// are counted after its own answer and the calls follow each other as closely as before.
const service = new MemoryService({ db, embedder: syntheticEmbedder(), nearDuplicateThreshold: config.memory.nearDuplicateThreshold, recallCountsDelayMs: 0 });

const operations: [string, (index: number) => Promise<unknown>][] = [
  ['recall', (index) => service.recall(HEAVY_SUBJECT, { query: queryText(index), limit: 10, maxChars: 8000, filters: noFilters() })],
  ['remember', (index) => service.remember(HEAVY_SUBJECT, { text: memoryText(5_000_000 + index), tags: [], importance: 0.5, sourceProvider: undefined, captureMode: undefined, sessionId: undefined, expiresAt: undefined, lastConfirmedAt: undefined }, 'ask')],
];

console.log(`SQL profile: ${calls} calls each, one subject of ${memories} memories, PostgreSQL, schema ${config.database.schema}, node ${process.version}`);
try {
  for (const [name, run] of operations) {
    for (let i = 0; i < 10; i++) await run(i); // warm-up
    await new Promise((resolve) => setTimeout(resolve, AFTER_ANSWER_MS));
    const byStatement = new Map<string, number[]>();
    const perCall: number[] = [];
    const after: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < calls; i++) {
      recorder.statements = [];
      recorder.trips = 0;
      const t0 = performance.now();
      await run(100 + i);
      wall.push(performance.now() - t0);
      // A statement still unanswered when the call answers (a read-only commit) was not waited for.
      perCall.push(recorder.trips - (recorder.inFlight > 0 ? 1 : 0));
      // What the service does once the call has answered (recall's counts: RecallCounts), counted apart.
      await new Promise((resolve) => setTimeout(resolve, AFTER_ANSWER_MS));
      after.push(recorder.trips - perCall.at(-1)!);
      for (const statement of recorder.statements) {
        const key = statement.text.slice(0, 90);
        byStatement.set(key, [...(byStatement.get(key) ?? []), statement.ms]);
      }
    }
    const whole = summarise(wall, 1);
    console.log(
      `\n${name}: ${perCall[0]} round trips per call (min ${Math.min(...perCall)}, max ${Math.max(...perCall)}) and ${after[0]} after its answer (max ${Math.max(...after)}); ` +
        `whole call p50 ${whole.p50.toFixed(2)} ms p95 ${whole.p95.toFixed(2)} ms`,
    );
    for (const [key, times] of byStatement) {
      const s = summarise(times, 1);
      console.log(`  ${String(times.length).padStart(4)}× p50 ${s.p50.toFixed(2).padStart(6)} ms p95 ${s.p95.toFixed(2).padStart(6)} ms  ${key}`);
    }
    recorder.explain = true;
    recorder.plans = [];
    await run(100_000);
    recorder.explain = false;
    console.log(`\n${name}, EXPLAIN (ANALYZE, BUFFERS) of each statement:\n${recorder.plans.join('\n\n')}`);
  }
} finally {
  await db.close();
}

function noFilters() {
  return { tags: [], tagMatch: 'any' as const, sessionId: undefined, captureMode: undefined, sourceProvider: undefined, createdAfter: undefined, createdBefore: undefined };
}
