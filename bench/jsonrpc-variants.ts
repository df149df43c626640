// Before/after for /mcp's per-request cost: two or more services side by side, each in its own process, loaded
// in turn (alternating order, so drift on the machine hits every variant alike) by autocannon in this process.
// Reports the service's CPU time (all threads, user + system) per answered request, the steadiest figure here.
// A variant is `tree=<checkout>` (another checkout of this repository, with node_modules, for "before"; default
// this one), `level=info|warn` (LogLevel; default info) and/or `flags=<node flags>` (space-separated, for the
// server process, e.g. flags=--max-semi-space-size=32), joined with commas, e.g.
//   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   npx tsx bench/jsonrpc-variants.ts 4 6 tools/list tree=/tmp/before tree=.
// Run: npx tsx bench/jsonrpc-variants.ts [secondsPerRun=4] [rounds=6] [method=tools/list] variant variant [...]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import type { ServerChild, startServerChild as StartServerChild } from './lib/server-child.js';
import { median } from './lib/stats.js';
import { alternatingRounds, variantFields } from './lib/variants.js';

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 6);
const method = process.argv[4] ?? 'tools/list';
const names = process.argv.slice(5);
if (names.length < 2) throw new Error('name at least two variants, e.g. tree=/tmp/before tree=.');

const logDir = mkdtempSync(join(tmpdir(), 'jsonrpc-variants-'));
const env = { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '1000000', MEMORY_SERVICE_METRICS_TOKEN: 'bench-metrics-token-0123456789abcdef' };
const servers: ServerChild[] = [];
for (const [i, name] of names.entries()) {
  const fields = variantFields(name);
  const tree = resolve(fields.tree ?? '.');
  const { startServerChild } = (await import(pathToFileURL(join(tree, 'bench/lib/server-child.ts')).href)) as { startServerChild: typeof StartServerChild };
  servers.push(await startServerChild({ embedder: 'synthetic', log: { level: (fields.level ?? 'info') as 'info' | 'warn', file: join(logDir, `${i}.log`) }, env, ...(fields.flags === undefined ? {} : { nodeFlags: fields.flags.split(' ') }) }));
}
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} });
const tokens = await Promise.all(servers.map((server) => server.token('variants')));

async function run(i: number, duration: number): Promise<{ rps: number; cpu: number }> {
  const server = servers[i]!;
  const before = await server.cpuMicros();
  const result = await autocannon({
    url: server.mcpUrl,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[i]}` },
    connections: 32,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${names[i]}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, cpu: ((await server.cpuMicros()) - before) / result.requests.total };
}

try {
  for (const i of servers.keys()) await run(i, 2);
  const runs = await alternatingRounds(servers.length, rounds, (i) => run(i, seconds));
  console.log(`${method}: ${rounds} rounds of ${seconds} s per variant, 32 connections, alternating order`);
  for (const [i, name] of names.entries()) {
    const cpu = runs[i]!.map((r) => r.cpu);
    console.log(`${name.padEnd(28)} ${median(runs[i]!.map((r) => r.rps)).toFixed(0).padStart(6)} req/s  CPU ${median(cpu).toFixed(1)} µs/request (runs ${cpu.map((c) => c.toFixed(1)).join(' ')})`);
  }
} finally {
  await Promise.all(servers.map((server) => server.close()));
  rmSync(logDir, { recursive: true, force: true });
}
