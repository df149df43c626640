// Where the time goes in one recall: embedding the query (local model), SQL (the subject-scoped transaction,
// including BEGIN/COMMIT and the settings that enforce row-level security), JSON serialisation, and the
// HTTP + token-check + JSON-RPC path (measured as a ping: with a cached verdict, and with a fresh token whose
// signature is checked). One client, one request at a time, 100k memories in the searched subject.
// Run: npx tsx bench/recall-profile.ts [recalls=300] [memories=100000]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeService } from '../src/compose.js';
import { createLocalProvider } from '../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../src/embeddings/provider.js';
import { benchConfig, benchToken } from './lib/bench-config.js';
import { benchEngines } from './lib/bench-server.js';
import { postJson } from './lib/rpc-client.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { summarise } from './lib/stats.js';
import { queryText } from './lib/synthetic-embedder.js';

const recalls = Number(process.argv[2] ?? 300);
const memories = Number(process.argv[3] ?? 100_000);

const local = createLocalProvider();
await local.ready();

console.log(`recall profile: ${recalls} sequential recalls (limit 10) over ${memories} memories, local model, node ${process.version}`);
for (const engine of benchEngines) {
  const seeded = await seededDatabase(engine, memories);
  const parts = { embedding: [] as number[], sql: [] as number[] };
  const timed: EmbeddingProvider = {
    model: local.model,
    dimensions: local.dimensions,
    async embed(texts) {
      const t0 = performance.now();
      try {
        return await local.embed(texts);
      } finally {
        parts.embedding.push(performance.now() - t0);
      }
    },
    ready: () => local.ready(),
    close: async () => undefined,
  };
  const dataDir = seeded.env.MEMORY_SERVICE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'memory-profile-'));
  const config = benchConfig(dataDir, seeded.env);
  const service = await composeService(config, { embedder: timed });
  // Every database round trip of a tool runs inside withSubject: time it from the outside.
  const withSubject = service.db.withSubject.bind(service.db);
  (service.db as { withSubject: typeof withSubject }).withSubject = async (subject, activity, fn) => {
    const t0 = performance.now();
    try {
      return await withSubject(subject, activity, fn);
    } finally {
      parts.sql.push(performance.now() - t0);
    }
  };
  const address = await service.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/mcp`;
  const issue = (subject: string) => benchToken(service.stateFile!, config, subject);
  try {
    const token = await issue(HEAVY_SUBJECT);
    const recall = (index: number) =>
      postJson(url, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: queryText(index) } } });
    for (let i = 0; i < 30; i++) await recall(i); // warm-up
    parts.embedding.length = 0;
    parts.sql.length = 0;

    const total: number[] = [];
    const serialisation: number[] = [];
    let found = 0;
    for (let i = 0; i < recalls; i++) {
      const t0 = performance.now();
      const { status, text } = await recall(1000 + i);
      total.push(performance.now() - t0);
      if (status !== 200) throw new Error(`recall failed: ${status} ${text.slice(0, 200)}`);
      // The server stringifies the result once; the client parses it. Timed here on the same object.
      const s0 = performance.now();
      const parsed = JSON.parse(text) as { result: { structuredContent: { memories: unknown[] } } };
      const s1 = performance.now();
      JSON.stringify(parsed);
      serialisation.push(performance.now() - s1 + (s1 - s0));
      found += parsed.result.structuredContent.memories.length;
    }
    const ping = async (bearer: string) => {
      const t0 = performance.now();
      const { status } = await postJson(url, bearer, { jsonrpc: '2.0', id: 1, method: 'ping', params: {} });
      if (status !== 200) throw new Error(`ping failed: ${status}`);
      return performance.now() - t0;
    };
    const cachedPing: number[] = [];
    for (let i = 0; i < recalls; i++) cachedPing.push(await ping(token));
    const freshTokens = await Promise.all(Array.from({ length: recalls }, (_, i) => issue(`profile-${i}`)));
    const freshPing: number[] = [];
    for (const fresh of freshTokens) freshPing.push(await ping(fresh));

    const rows: [string, number[]][] = [
      ['whole recall (client side)', total],
      ['  embedding the query', parts.embedding],
      ['  SQL (subject transaction)', parts.sql],
      ['  JSON stringify + parse', serialisation],
      ['  HTTP + auth + JSON-RPC (ping)', cachedPing],
      ['ping with a fresh token', freshPing],
    ];
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
    const whole = mean(total);
    console.log(`\n${engine}: ${found / recalls} memories per answer on average`);
    for (const [label, values] of rows) {
      const s = summarise(values, 1);
      console.log(
        `${label.padEnd(32)} mean ${mean(values).toFixed(2).padStart(7)} ms  p50 ${s.p50.toFixed(2).padStart(7)} ms  p95 ${s.p95.toFixed(2).padStart(7)} ms` +
          (label.startsWith('  ') ? `  ${((mean(values) / whole) * 100).toFixed(0).padStart(3)}% of the mean` : ''),
      );
    }
    const accounted = mean(parts.embedding) + mean(parts.sql) + mean(serialisation) + mean(cachedPing);
    console.log(`${'  the rest (validation, mapping)'.padEnd(32)} mean ${(whole - accounted).toFixed(2).padStart(7)} ms`);
  } finally {
    await service.close();
  }
}
await local.close();
