// remember through the whole stack (HTTP, auth, validation, local embedding, near-duplicate check, insert)
// with the local model, at 1, 8 and 32 concurrent clients (one subject each, as in real use), on PGlite and
// (when BENCH_DATABASE_URL or TEST_DATABASE_URL is set) PostgreSQL. The server runs in its own process;
// this one generates the load. Also: the time from starting the server process to its first answer
// (listening, then a first remember, which needs the model), and its RSS idle and under load.
// Run: npx tsx bench/remember.ts [secondsPerRun=15]   (BENCH_ENGINES=pglite or postgres for one engine)
// BENCH_TEXTS=locomo remembers LoCoMo's conversation turns instead (bench/lib/remember-texts.ts).
import { readFileSync } from 'node:fs';
import { BENCH_DATABASE_URL, benchEngines, dropBenchSchema } from './lib/bench-server.js';
import { rememberTexts } from './lib/remember-texts.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { build, startServerChild } from './lib/server-child.js';
import { formatRow } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 15);
const engines = process.env.BENCH_ENGINES === undefined ? benchEngines : benchEngines.filter((engine) => process.env.BENCH_ENGINES!.split(',').includes(engine));
const texts = rememberTexts();
const CONCURRENCY = [1, 8, 32];

/** Resident set size of a process right now, in MB (no collection first: what the machine pays). */
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

console.log(`remember benchmark: ${seconds} s per run, local embedding model, ${texts.description}, node ${process.version}`);
build(); // before the clock starts: the first server's cold start must not include compiling the service
for (const engine of engines) {
  const schema = `bench_remember_${Date.now().toString(36)}`;
  const started = performance.now();
  const server = await startServerChild({
    embedder: 'local',
    env: engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : {},
  });
  const listening = performance.now() - started;
  try {
    const first = await server.token(`bench-${engine}-first`);
    await callTool(server.mcpUrl, first, 'remember', { text: 'The user was born in Lisbon', dedup_policy: 'insert' });
    const answered = performance.now() - started;
    console.log(`${engine} cold start: listening after ${(listening / 1000).toFixed(1)} s, first remember answered after ${(answered / 1000).toFixed(1)} s`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const idle = await server.stats();
    console.log(`${engine} idle: rss ${rssMb(server.pid).toFixed(0)} MB (after a full GC ${(idle.rss / 2 ** 20).toFixed(0)} MB, heap ${(idle.heapUsed / 2 ** 20).toFixed(0)} MB)`);
    for (const concurrency of CONCURRENCY) {
      const tokens = await Promise.all(Array.from({ length: concurrency }, (_, i) => server.token(`bench-${engine}-${concurrency}-${i}`)));
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 250);
      const summary = await runFor(seconds, concurrency, async (index, worker) => {
        await callTool(server.mcpUrl, tokens[worker]!, 'remember', { text: texts.textFor(`${engine}-${concurrency}`, index) });
      });
      clearInterval(sampler);
      console.log(`${formatRow(`${engine} remember c=${concurrency}`, summary)}  rss peak ${peak.toFixed(0)} MB`);
    }
  } finally {
    await server.close();
    if (engine === 'postgres') await dropBenchSchema(schema);
  }
}
