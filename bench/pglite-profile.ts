// The SQL of a short subject's recall and of a 16,000-character remember on PGlite, statement by statement: what
// the fairness benchmark's subject B runs, and what its subject A's transaction holds PGlite's one connection
// for (in-process PGlite, memory://). Then both at once through PGlite's own thread, as the service runs it (a
// data folder): B recalls at a steady pace, first alone, then while A stores one long text after another; it
// reports how long B waited for the connection and how long A's transactions held it (round trips as the main
// thread sees them). The service's own MemoryService, synthetic vectors, no model.
// Run: npx tsx bench/pglite-profile.ts [recalls=100] [remembers=10] [secondsPerPhase=20]
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { QueryOptions, Results } from '@electric-sql/pglite';
import { openDatabase, type DatabaseHandle } from '../src/db/open-database.js';
import { openPGlite } from '../src/db/pglite-open.js';
import { PGliteThread } from '../src/db/pglite-thread.js';
import { LOCAL_MODEL_DIMENSIONS } from '../src/embeddings/local-provider.js';
import { MemoryService } from '../src/memory/memory-service.js';
import { summarise } from './lib/stats.js';
import { memoryText, queryText, syntheticEmbedder } from './lib/synthetic-embedder.js';

const recalls = Number(process.argv[2] ?? 100);
const remembers = Number(process.argv[3] ?? 10);
const secondsPerPhase = Number(process.argv[4] ?? 20);
const SHORT_MEMORIES = 200;
const LONG_TEXT_CHARS = 16_000;
/** B's pace (the fairness benchmark's), and about the pace at which the local model lets A store long texts there. */
const B_PER_SECOND = 5;
const A_PER_SECOND = 3;

/** Which subject's call a statement belongs to (the contention phases). */
const caller = new AsyncLocalStorage<'A' | 'B'>();
const statements: { text: string; started: number; ms: number; subject: 'A' | 'B' | undefined }[] = [];
type Query = <T>(text: string, params?: unknown[], options?: QueryOptions) => Promise<Results<T>>;
/** `query`, timing each statement; the options pass through (they carry the vector's binary serializer). */
const timed = (query: Query): Query =>
  async function <T>(this: unknown, text: string, params?: unknown[], options?: QueryOptions) {
    const started = performance.now();
    try {
      return await query.call(this, text, params, options) as Results<T>;
    } finally {
      statements.push({ text: text.trim().replace(/\s+/g, ' ').slice(0, 100), started, ms: performance.now() - started, subject: caller.getStore() });
    }
  };

const memory = (text: string) => ({ text, tags: [], importance: 0.5, sourceProvider: undefined, captureMode: undefined, sessionId: undefined, expiresAt: undefined, lastConfirmedAt: undefined });
const longText = (index: number) => {
  let text = '';
  for (let i = 0; text.length < LONG_TEXT_CHARS; i++) text += `${memoryText(index * 1_000 + i)}. `;
  return text.slice(0, LONG_TEXT_CHARS);
};
const noFilters = { tags: [], tagMatch: 'any' as const, sessionId: undefined, captureMode: undefined, sourceProvider: undefined, createdAfter: undefined, createdBefore: undefined };

async function seeded(db: DatabaseHandle): Promise<MemoryService> {
  const service = new MemoryService({ db, embedder: syntheticEmbedder(), nearDuplicateThreshold: 0.9 });
  for (let i = 0; i < SHORT_MEMORIES; i++) await service.remember('B', memory(memoryText(i)), 'insert');
  for (let i = 0; i < 20; i++) await service.remember('A', memory(longText(i)), 'ask');
  return service;
}

async function profile(name: string, calls: number, run: (index: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 5; i++) await run(i); // warm-up
  const byStatement = new Map<string, number[]>();
  const wall: number[] = [];
  for (let i = 0; i < calls; i++) {
    statements.length = 0;
    const started = performance.now();
    await run(100 + i);
    wall.push(performance.now() - started);
    for (const { text, ms } of statements) byStatement.set(text, [...(byStatement.get(text) ?? []), ms]);
  }
  const whole = summarise(wall, 1);
  console.log(`\n${name}: ${calls} calls, whole call p50 ${whole.p50.toFixed(1)} ms, p99 ${whole.p99.toFixed(1)} ms, max ${Math.max(...wall).toFixed(1)} ms`);
  for (const [text, times] of byStatement) {
    const each = summarise(times, 1);
    console.log(`  p50 ${each.p50.toFixed(2).padStart(6)} ms  p99 ${each.p99.toFixed(2).padStart(6)} ms  ${text}`);
  }
}

/** Calls `operation` every 1/rate seconds for `seconds` (open loop); with `oneAtATime`, skips a turn while one runs. */
async function paced(rate: number, seconds: number, operation: (index: number) => Promise<unknown>, oneAtATime = false): Promise<void> {
  const started = performance.now();
  const running = new Set<Promise<unknown>>();
  for (let index = 0; performance.now() - started < seconds * 1000; index++) {
    const wait = started + (index * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (oneAtATime && running.size > 0) continue;
    const call = operation(index).finally(() => running.delete(call));
    running.add(call);
  }
  await Promise.all(running);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

/** B recalls for secondsPerPhase, with A storing long texts one at a time if `withA`: B's wait for the connection. */
async function contention(service: MemoryService, withA: boolean): Promise<void> {
  statements.length = 0;
  const calls: { started: number; ms: number }[] = [];
  const recallB = (index: number) =>
    caller.run('B', async () => {
      const started = performance.now();
      await service.recall('B', { query: queryText(index), limit: 10, maxChars: 8000, filters: noFilters });
      calls.push({ started, ms: performance.now() - started });
    });
  // dedup_policy insert, as the fairness benchmark's A sends: no near-duplicate candidates to compare.
  const rememberA = (index: number) => caller.run('A', () => service.remember('A', memory(longText(2_000 + index)), 'insert'));
  await Promise.all([paced(B_PER_SECOND, secondsPerPhase, recallB), withA ? paced(A_PER_SECOND, secondsPerPhase, rememberA, true) : undefined]);

  const whole = summarise(calls.map((call) => call.ms), 1);
  // From B's call to its transaction's first statement; the synthetic query vector takes ~0.1 ms of it.
  const waits = calls.map(({ started }) => (statements.find((s) => s.subject === 'B' && s.started >= started)?.started ?? started) - started);
  const wait = summarise(waits, 1);
  console.log(`\nB recalls ${withA ? `while A stores ${LONG_TEXT_CHARS}-character texts (one at a time, at most ${A_PER_SECOND}/s)` : 'alone'}, through the thread: ${calls.length} at ${B_PER_SECOND}/s`);
  console.log(`  B whole call p50 ${ms(whole.p50)}, p99 ${ms(whole.p99)}, max ${ms(Math.max(...calls.map((call) => call.ms)))}`);
  console.log(`  B waited for the connection: p50 ${ms(wait.p50)}, p99 ${ms(wait.p99)}, max ${ms(Math.max(...waits))}; ${waits.filter((w) => w > 5).length} of ${waits.length} recalls over 5 ms`);
  if (!withA) return;
  // A's transactions: the one that inserts the memory (with its first memory_terms rows), then its steps, each
  // writing the next rows (migration 0012).
  const holds = { insert: [] as number[], step: [] as number[] };
  const inserts: number[] = [];
  let begun: number | undefined;
  let kind: keyof typeof holds = 'insert';
  for (const statement of statements.filter((s) => s.subject === 'A')) {
    if (/^begin/i.test(statement.text)) begun = statement.started;
    // The insert (with its tombstone check, one statement since the round-trip cut).
    if (/^with stepped as|insert into "memories"/.test(statement.text)) {
      kind = 'insert';
      inserts.push(statement.ms);
    }
    if (/memory_terms_continue/.test(statement.text)) kind = 'step';
    if (/^(commit|rollback)/i.test(statement.text) && begun !== undefined) holds[kind].push(statement.started + statement.ms - begun);
  }
  const hold = summarise(holds.insert, 1);
  const step = summarise(holds.step, 1);
  const insert = summarise(inserts, 1);
  console.log(`  A: ${holds.insert.length} stored; the inserting transaction held the connection p50 ${ms(hold.p50)}, p99 ${ms(hold.p99)}, its insert p50 ${ms(insert.p50)}, p99 ${ms(insert.p99)}; ${holds.step.length} steps held it p50 ${ms(step.p50)}, p99 ${ms(step.p99)}`);
}

console.log(`PGlite profile: subject B ${SHORT_MEMORIES} short memories, subject A 20 texts of ${LONG_TEXT_CHARS} characters, node ${process.version}`);
const pglite = await openPGlite('memory://');
pglite.query = timed(pglite.query.bind(pglite) as Query) as typeof pglite.query;
const db = await openDatabase({ dataDir: 'memory://', schema: 'pglite_profile', embeddingDimensions: LOCAL_MODEL_DIMENSIONS, pglite });
const service = await seeded(db);
await profile('B recall', recalls, (index) => service.recall('B', { query: queryText(index), limit: 10, maxChars: 8000, filters: noFilters }));
await profile(`A remember (${LONG_TEXT_CHARS} characters)`, remembers, (index) => service.remember('A', memory(longText(500 + index)), 'ask'));
await db.close();
await pglite.close();

// In-process, a statement's WASM holds the event loop, so a recall cannot even start while A's insert runs: the
// contention is measured where the service has it, with PGlite in its own thread.
if (secondsPerPhase > 0) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pglite-profile-'));
  PGliteThread.prototype.query = timed(PGliteThread.prototype.query as Query) as typeof PGliteThread.prototype.query;
  const threaded = await openDatabase({ dataDir, schema: 'public', embeddingDimensions: LOCAL_MODEL_DIMENSIONS });
  try {
    const threadedService = await seeded(threaded);
    await contention(threadedService, false);
    await contention(threadedService, true);
  } finally {
    await threaded.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
