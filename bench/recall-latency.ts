// recall latency and throughput through the whole stack (HTTP, token check, validation, embedding, hybrid
// ranking, JSON) at 10k and 100k memories spread over many subjects (200 each), on PGlite and (when
// BENCH_DATABASE_URL or TEST_DATABASE_URL is set) PostgreSQL, at 1 and 16 concurrent clients.
// The data carries synthetic vectors (embedding 100k texts with the local model would take half an hour), so
// two query embedders are measured: "sql" gives queries synthetic vectors instantly (everything but the model),
// "full" embeds each query with the local model, as the service does.
// Run: npx tsx bench/recall-latency.ts [sizes=10000,100000] [seconds per run=15]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeService } from '../src/compose.js';
import { createLocalProvider } from '../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../src/embeddings/provider.js';
import { benchConfig, benchToken } from './lib/bench-config.js';
import { BENCH_DATABASE_URL, benchEngines } from './lib/bench-server.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { seedSubjects } from './lib/seed-subjects.js';
import { formatRow } from './lib/stats.js';
import { queryText, syntheticEmbedder } from './lib/synthetic-embedder.js';

const sizes = (process.argv[2] ?? '10000,100000').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 15);
const PER_SUBJECT = 200;

const local = createLocalProvider();
await local.ready();
// Shared by every server of the run: a server's close() must not unload it.
const localShared: EmbeddingProvider = { model: local.model, dimensions: local.dimensions, embed: (texts) => local.embed(texts), ready: async () => undefined, close: async () => undefined };
const embedders: [string, EmbeddingProvider][] = [
  ['sql', syntheticEmbedder()],
  ['full', localShared],
];

console.log(`recall benchmark: ${seconds} s per run, limit 10, ${PER_SUBJECT} memories per subject, node ${process.version}`);
for (const engine of benchEngines) {
  for (const size of sizes) {
    const subjects = Array.from({ length: Math.ceil(size / PER_SUBJECT) }, (_, i) => `user-${i}`);
    const seeded = await seedSubjects(engine, subjects.map((subject) => ({ subject, count: PER_SUBJECT })));
    console.log(`${engine} ${size}: ${subjects.length} subjects seeded in ${seeded.insertSeconds.toFixed(0)} s, HNSW index built in ${seeded.indexSeconds.toFixed(0)} s`);
    const dataDir = mkdtempSync(join(tmpdir(), 'memory-recall-bench-'));
    try {
      for (const [mode, embedder] of embedders) {
        const config = benchConfig(dataDir, {
          MEMORY_SERVICE_DATABASE_SCHEMA: seeded.schema,
          ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL! } : {}),
        });
        const service = await composeService(config, { embedder, ...(seeded.pglite === undefined ? {} : { pglite: seeded.pglite }) });
        try {
          const address = await service.app.listen({ host: '127.0.0.1', port: 0 });
          const url = `${address}/mcp`;
          // One token per subject searched; every request asks as a random subject, as many users would.
          const tokens = await Promise.all(
            subjects.slice(0, 64).map((subject) => benchToken(service.stateFile!, config, subject)),
          );
          const recall = (index: number) => callTool(url, tokens[(index * 2654435761) % tokens.length]!, 'recall', { query: queryText(index), limit: 10 });
          for (let i = 0; i < 20; i++) await recall(i);
          for (const concurrency of [1, 16]) {
            const summary = await runFor(seconds, concurrency, async (index) => void (await recall(index)));
            console.log(formatRow(`${engine} ${size / 1000}k ${mode} c=${concurrency}`, summary));
          }
        } finally {
          await service.close();
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await seeded.close();
    }
  }
}
await local.close();
