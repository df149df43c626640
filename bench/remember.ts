// remember latency and throughput through the whole stack (HTTP, auth, validation, embedding, dedup, insert)
// with the local model, at 1 and 16 concurrent clients, on PGlite and (when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set) PostgreSQL.  Run: npx tsx bench/remember.ts [requestsPerRun]
import { benchEngines, callTool, startBenchServer } from './lib/bench-server.js';
import { formatRow, runConcurrent } from './lib/stats.js';

const total = Number(process.argv[2] ?? 400);
const topics = ['hiking', 'cooking', 'chess', 'jazz', 'gardening', 'sailing', 'pottery', 'astronomy', 'cycling', 'baking'];
const factFor = (run: string, index: number) =>
  `In ${run} note ${index}, the user said they spent ${index % 7} hours on ${topics[index % topics.length]} with friend number ${index}`;

console.log(`remember benchmark: ${total} calls per run, local embedding model, node ${process.version}`);
for (const engine of benchEngines) {
  const server = await startBenchServer(engine);
  try {
    for (const concurrency of [1, 16]) {
      // One subject per client, as in real use; each subject's memories grow during the run.
      const tokens = await Promise.all(Array.from({ length: concurrency }, (_, i) => server.token(`bench-${engine}-${concurrency}-${i}`)));
      await callTool(server.mcpUrl, tokens[0]!, 'remember', { text: 'warm-up fact about the user', dedup_policy: 'insert' });
      const summary = await runConcurrent(total, concurrency, async (index) => {
        await callTool(server.mcpUrl, tokens[index % concurrency]!, 'remember', { text: factFor(`${engine}-${concurrency}`, index) });
      });
      console.log(formatRow(`${engine} remember c=${concurrency}`, summary));
    }
  } finally {
    await server.close();
  }
}
