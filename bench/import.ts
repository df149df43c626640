// The import rate of `memory-service import` with the local model, on PGlite and (when BENCH_DATABASE_URL or
// TEST_DATABASE_URL is set) PostgreSQL: each import is its own CLI process, as an operator runs it, into a fresh
// data folder or schema. Per engine: a file of our export format at --batch-size 64 (the default) and 1 (the
// ratio is what batching buys), an MCP memory server's memory.jsonl, then the same file again (every line a
// duplicate).  Run: npx tsx bench/import.ts [memories=2000]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DATABASE_URL, benchEngines, dropBenchSchema, type BenchEngine } from './lib/bench-server.js';

const total = Number(process.argv[2] ?? 2000);
const ENTRY = fileURLToPath(new URL('../test/helpers/cli-entry.ts', import.meta.url));
const topics = ['hiking', 'cooking', 'chess', 'jazz', 'gardening', 'sailing', 'pottery', 'astronomy', 'cycling', 'baking'];
const fact = (index: number) => `Note ${index}: the user spent ${index % 7} hours on ${topics[index % topics.length]} with friend number ${index}`;

const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
const ours = join(dir, 'export.jsonl');
writeFileSync(
  ours,
  [
    JSON.stringify({ format: 'memory-service-export', version: 1, exported_at: new Date().toISOString() }),
    ...Array.from({ length: total }, (_, i) => JSON.stringify({ type: 'memory', text: fact(i), tags: [topics[i % topics.length]] })),
  ].join('\n'),
);
// The same number of memories as MCP entities with 10 observations each.
const mcp = join(dir, 'memory.jsonl');
writeFileSync(
  mcp,
  Array.from({ length: Math.ceil(total / 10) }, (_, e) =>
    JSON.stringify({ type: 'entity', name: `Friend ${e}`, entityType: 'person', observations: Array.from({ length: 10 }, (_, o) => fact(e * 10 + o)) }),
  ).join('\n'),
);

interface Run {
  readonly seconds: number;
  readonly summary: string;
  /** The CLI's own rate over the import itself (its last progress line), without start-up. */
  readonly rate: string;
}

function importOnce(env: Record<string, string>, subject: string, file: string, batchSize: number): Promise<Run> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, 'import', '--sub', subject, '--batch-size', String(batchSize), file], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, MEMORY_SERVICE_CONFIG: join(dir, 'application.ini'), MEMORY_SERVICE_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`import exited ${code}: ${stderr}`));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolve({ seconds, summary: stdout.split('\n')[0] ?? '', rate: /\((\d+)\/s\)\s*$/.exec(stderr)?.[1] ?? '?' });
    });
  });
}

writeFileSync(join(dir, 'application.ini'), '');
console.log(`import benchmark: ${total} memories per file, local embedding model, node ${process.version}`);
console.log('| engine | file | batch | wall s | memories/s (wall) | memories/s (CLI, after start-up) | summary |');
console.log('|---|---|---|---|---|---|---|');
const row = (engine: BenchEngine, file: string, batch: number, run: Run) =>
  console.log(`| ${engine} | ${file} | ${batch} | ${run.seconds.toFixed(1)} | ${(total / run.seconds).toFixed(1)} | ${run.rate} | ${run.summary} |`);
try {
  for (const engine of benchEngines) {
    const schema = `bench_import_${Date.now().toString(36)}`;
    const env = engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : { MEMORY_SERVICE_DATA_DIR: join(dir, 'data') };
    try {
      row(engine, 'export', 64, await importOnce(env, 'bench-64', ours, 64));
      row(engine, 'export', 1, await importOnce(env, 'bench-1', ours, 1));
      row(engine, 'memory.jsonl', 64, await importOnce(env, 'bench-mcp', mcp, 64));
      row(engine, 'export again', 64, await importOnce(env, 'bench-64', ours, 64));
    } finally {
      if (engine === 'postgres') await dropBenchSchema(schema);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
