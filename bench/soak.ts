// Soak: a mixed load (recall 40%, remember 20%, tools/list 20%, ping 20%) from 16 clients for several
// minutes, with the per-subject rate limit on and new subjects (new tokens) arriving all the time, while the
// server process's memory (after a full GC), open handles and database pool are sampled. Remember repeats
// a bounded set of facts with `skip_if_near`, so the data stops growing and any growth left is the process's.
// Not a test: it takes minutes. Run: npx tsx bench/soak.ts [minutes=5] [pglite|postgres]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_DATABASE_URL, dropBenchSchema } from './lib/bench-server.js';
import { callTool, postJson } from './lib/rpc-client.js';
import { startServerChild, type ProcessStats } from './lib/server-child.js';
import { memoryText, queryText } from './lib/synthetic-embedder.js';

const minutes = Number(process.argv[2] ?? 5);
const engine = process.argv[3] === 'postgres' ? 'postgres' : 'pglite';
const CLIENTS = 16;
const SUBJECTS = 2_000;
const SAMPLE_EVERY_MS = 15_000;

if (engine === 'postgres' && BENCH_DATABASE_URL === undefined) throw new Error('set BENCH_DATABASE_URL or TEST_DATABASE_URL');
const dataDir = mkdtempSync(join(tmpdir(), 'memory-soak-'));
const schema = `soak_${Date.now().toString(36)}`;
const server = await startServerChild({
  embedder: 'synthetic',
  env: {
    MEMORY_SERVICE_DATA_DIR: dataDir,
    MEMORY_SERVICE_DATABASE_SCHEMA: engine === 'postgres' ? schema : 'public',
    MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '100000',
    ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL! } : {}),
  },
});

const tokens = new Map<number, Promise<string>>();
const tokenFor = (subject: number) => {
  let token = tokens.get(subject);
  if (token === undefined) tokens.set(subject, (token = server.token(`soak-${subject}`)));
  return token;
};

const counts = { recall: 0, remember: 0, 'tools/list': 0, ping: 0 };
let stop = false;
let operations = 0;
async function client(worker: number): Promise<void> {
  for (let i = worker; !stop; i += CLIENTS) {
    operations++;
    // A new subject every few requests at first, then the same 2000 again and again.
    const token = await tokenFor(i % SUBJECTS);
    const roll = i % 10;
    if (roll < 4) {
      counts.recall++;
      await callTool(server.mcpUrl, token, 'recall', { query: queryText(i) });
    } else if (roll < 6) {
      counts.remember++;
      await callTool(server.mcpUrl, token, 'remember', { text: memoryText(i % 50), dedup_policy: 'skip_if_near' });
    } else {
      const method = roll < 8 ? 'tools/list' : 'ping';
      counts[method]++;
      const { status } = await postJson(server.mcpUrl, token, { jsonrpc: '2.0', id: i, method, params: {} });
      if (status !== 200) throw new Error(`${method}: HTTP ${status}`);
    }
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1).padStart(7);
const samples: { minute: number; stats: ProcessStats }[] = [];
const started = performance.now();
async function sample(): Promise<void> {
  const stats = await server.stats();
  const minute = (performance.now() - started) / 60_000;
  samples.push({ minute, stats });
  console.log(
    `${minute.toFixed(2).padStart(5)} min  ops ${String(operations).padStart(7)}  rss ${mb(stats.rss)} MB  heap ${mb(stats.heapUsed)} MB` +
      `  external ${mb(stats.external)} MB  handles ${String(stats.handles).padStart(4)}  pool ${stats.pool.total}/${stats.pool.idle}/${stats.pool.waiting}`,
  );
}

console.log(`soak on ${engine}: ${minutes} min, ${CLIENTS} clients, ${SUBJECTS} subjects, node ${process.version}`);
await sample();
const timer = setInterval(() => void sample(), SAMPLE_EVERY_MS);
const clients = Array.from({ length: CLIENTS }, (_, worker) => client(worker));
await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
stop = true;
await Promise.all(clients);
clearInterval(timer);
await sample();

/** Least-squares slope, per minute, over the second half of the run (after warm-up and the first pass over subjects). */
function slope(pick: (stats: ProcessStats) => number): number {
  const tail = samples.filter((s) => s.minute >= minutes / 2);
  const n = tail.length;
  const mx = tail.reduce((sum, s) => sum + s.minute, 0) / n;
  const my = tail.reduce((sum, s) => sum + pick(s.stats), 0) / n;
  const num = tail.reduce((sum, s) => sum + (s.minute - mx) * (pick(s.stats) - my), 0);
  const den = tail.reduce((sum, s) => sum + (s.minute - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}
const seconds = (performance.now() - started) / 1000;
console.log(`\n${operations} operations in ${seconds.toFixed(0)} s (${(operations / seconds).toFixed(0)}/s): ${JSON.stringify(counts)}`);
console.log(
  `second-half trend per minute: heap ${mb(slope((s) => s.heapUsed))} MB, rss ${mb(slope((s) => s.rss))} MB, handles ${slope((s) => s.handles).toFixed(2)}`,
);
const first = samples[1]?.stats ?? samples[0]!.stats;
const last = samples.at(-1)!.stats;
console.log(`handles: ${first.handles} after the first sample, ${last.handles} at the end; pool waiting at the end: ${last.pool.waiting}`);

await server.close();
rmSync(dataDir, { recursive: true, force: true });
if (engine === 'postgres') await dropBenchSchema(schema);
