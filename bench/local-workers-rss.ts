// What each local-model worker costs in memory: the server's resident set (after a full GC, with the model
// loaded and warm) with LocalModelWorkers = 1, 2 and 4, each in a fresh server process on PGlite.
// Run: npx tsx bench/local-workers-rss.ts
import { callTool } from './lib/rpc-client.js';
import { startServerChild } from './lib/server-child.js';
import { memoryText } from './lib/synthetic-embedder.js';

const MB = 1024 * 1024;
console.log(`local model workers: server RSS by LocalModelWorkers, node ${process.version}`);
const rows: [number, number][] = [];
for (const workers of [1, 2, 4]) {
  const server = await startServerChild({ embedder: 'local', env: { MEMORY_SERVICE_LOCAL_MODEL_WORKERS: String(workers) } });
  try {
    const token = await server.token('rss');
    // Every worker embeds something, so each has run the model at least once.
    await Promise.all(Array.from({ length: 8 * workers }, (_, i) => callTool(server.mcpUrl, token, 'remember', { text: memoryText(i), dedup_policy: 'insert' })));
    const { rss } = await server.stats();
    rows.push([workers, rss]);
    console.log(`LocalModelWorkers=${workers}: RSS ${(rss / MB).toFixed(0)} MB`);
  } finally {
    await server.close();
  }
}
const [first, last] = [rows[0]!, rows.at(-1)!];
console.log(`per extra worker: ${((last[1] - first[1]) / (last[0] - first[0]) / MB).toFixed(0)} MB`);
