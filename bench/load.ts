// recall and remember latency (p50/p95/p99) and throughput at 1, 16 and 64 concurrent clients, through the
// whole stack, on PGlite and PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL), with 100k memories.
// Two rows per cell: without the embedding step (synthetic vectors, so the figures are HTTP + auth + SQL)
// and with the local model. The 100k memories belong to one subject, which recall searches (the worst
// case: one user with 100k memories); remember writes as 64 other subjects (each client its own, as in
// real use), plus one run that remembers into the 100k subject (its near-duplicate check scans them).
// The server runs in its own process. Run: npx tsx bench/load.ts [secondsPerCell=8] [memories=100000]
import { benchEngines } from './lib/bench-server.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { startServerChild } from './lib/server-child.js';
import { formatRow } from './lib/stats.js';
import { memoryText, queryText } from './lib/synthetic-embedder.js';

const seconds = Number(process.argv[2] ?? 8);
const memories = Number(process.argv[3] ?? 100_000);
const CONCURRENCY = [1, 16, 64];

console.log(`load benchmark: ${memories} memories in one subject, ${seconds} s per cell, node ${process.version}`);
for (const engine of benchEngines) {
  const seeded = await seededDatabase(engine, memories);
  for (const embedder of ['synthetic', 'local'] as const) {
    const label = embedder === 'synthetic' ? 'no embedding' : 'local model';
    const server = await startServerChild({ embedder, env: seeded.env });
    try {
      const heavy = await server.token(HEAVY_SUBJECT);
      const writers = await Promise.all(Array.from({ length: 64 }, (_, i) => server.token(`bench-writer-${i}`)));
      await callTool(server.mcpUrl, heavy, 'recall', { query: queryText(0) });
      for (const concurrency of CONCURRENCY) {
        const summary = await runFor(seconds, concurrency, async (index) => {
          await callTool(server.mcpUrl, heavy, 'recall', { query: queryText(index) });
        });
        console.log(formatRow(`${engine} recall ${label} c=${concurrency}`, summary));
      }
      for (const concurrency of CONCURRENCY) {
        const summary = await runFor(seconds, concurrency, async (index, worker) => {
          await callTool(server.mcpUrl, writers[worker]!, 'remember', { text: memoryText(1_000_000 + index) });
        });
        console.log(formatRow(`${engine} remember ${label} c=${concurrency}`, summary));
      }
      const intoHeavy = await runFor(seconds, 1, async (index) => {
        await callTool(server.mcpUrl, heavy, 'remember', { text: memoryText(2_000_000 + index) });
      });
      console.log(formatRow(`${engine} remember→100k ${label} c=1`, intoHeavy));
    } finally {
      await server.close();
    }
  }
}
