// The SQL of a short subject's recall and of a 16,000-character remember on PGlite, statement by statement: what
// the fairness benchmark's subject B runs, and what its subject A's transaction holds PGlite's one connection
// for. In-process PGlite (memory://), the service's own MemoryService, synthetic vectors, no model.
// Run: npx tsx bench/pglite-profile.ts [recalls=100] [remembers=10]
import type { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../src/db/open-database.js';
import { openPGlite } from '../src/db/pglite-open.js';
import { LOCAL_MODEL_DIMENSIONS } from '../src/embeddings/local-provider.js';
import { MemoryService } from '../src/memory/memory-service.js';
import { summarise } from './lib/stats.js';
import { memoryText, queryText, syntheticEmbedder } from './lib/synthetic-embedder.js';

const recalls = Number(process.argv[2] ?? 100);
const remembers = Number(process.argv[3] ?? 10);
const SHORT_MEMORIES = 200;
const LONG_TEXT_CHARS = 16_000;

const pglite = await openPGlite('memory://');
const statements: { text: string; ms: number }[] = [];
const query = pglite.query.bind(pglite);
pglite.query = (async (text: string, params?: unknown[]) => {
  const started = performance.now();
  try {
    return await query(text, params);
  } finally {
    statements.push({ text: text.trim().replace(/\s+/g, ' ').slice(0, 100), ms: performance.now() - started });
  }
}) as PGlite['query'];

const db = await openDatabase({ dataDir: 'memory://', schema: 'pglite_profile', embeddingDimensions: LOCAL_MODEL_DIMENSIONS, pglite });
const service = new MemoryService({ db, embedder: syntheticEmbedder(), nearDuplicateThreshold: 0.9 });
const memory = (text: string) => ({ text, tags: [], importance: 0.5, sourceProvider: undefined, captureMode: undefined, sessionId: undefined, expiresAt: undefined, lastConfirmedAt: undefined });
const longText = (index: number) => {
  let text = '';
  for (let i = 0; text.length < LONG_TEXT_CHARS; i++) text += `${memoryText(index * 1_000 + i)}. `;
  return text.slice(0, LONG_TEXT_CHARS);
};
const noFilters = { tags: [], tagMatch: 'any' as const, sessionId: undefined, captureMode: undefined, sourceProvider: undefined, createdAfter: undefined, createdBefore: undefined };

for (let i = 0; i < SHORT_MEMORIES; i++) await service.remember('B', memory(memoryText(i)), 'insert');
for (let i = 0; i < 20; i++) await service.remember('A', memory(longText(i)), 'ask');

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

console.log(`PGlite profile: subject B ${SHORT_MEMORIES} short memories, subject A 20 texts of ${LONG_TEXT_CHARS} characters, node ${process.version}`);
await profile('B recall', recalls, (index) => service.recall('B', { query: queryText(index), limit: 10, maxChars: 8000, filters: noFilters }));
await profile(`A remember (${LONG_TEXT_CHARS} characters)`, remembers, (index) => service.remember('A', memory(longText(500 + index)), 'ask'));
await db.close();
await pglite.close();
