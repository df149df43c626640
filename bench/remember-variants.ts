// Before/after for remember's throughput with the local model on one machine: two or more services side by side,
// each in its own process with its own model workers, loaded in turn (alternating order, so drift on the machine
// hits every variant alike) by closed-loop clients in this process, each client its own subject. The texts are
// bench/remember.ts's (BENCH_TEXTS=facts, the default, or locomo); every variant remembers the same texts in the
// same order. Reports remembers a second and the service's CPU time (all threads, user + system) per
// remember. A variant is `tree=<checkout>` (another checkout of this repository with its own node_modules, for
// "before"; default this one), `engine=pglite|postgres` (default pglite; postgres needs BENCH_DATABASE_URL or
// TEST_DATABASE_URL, and each variant gets a schema of its own, dropped at the end) and/or `flags=<node flags>`
// (space-separated, for the server process; this tree only), joined with commas, e.g.
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci)
//   BENCH_TEXTS=locomo npx tsx bench/remember-variants.ts 20 3 8 tree=/tmp/before,engine=postgres engine=postgres
// A tree's own bench/lib/server-child.ts starts its service, as that tree ran it (older trees through tsx).
// Run: npx tsx bench/remember-variants.ts [secondsPerRun=20] [rounds=3] [clients=8] variant variant [...]
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DATABASE_URL, dropBenchSchema } from './lib/bench-server.js';
import { rememberTexts } from './lib/remember-texts.js';
import { callTool, runFor } from './lib/rpc-client.js';
import type { ServerChild, startServerChild as StartServerChild } from './lib/server-child.js';
import { median } from './lib/stats.js';
import { alternatingRounds, variantFields } from './lib/variants.js';

const seconds = Number(process.argv[2] ?? 20);
const rounds = Number(process.argv[3] ?? 3);
const clients = Number(process.argv[4] ?? 8);
const names = process.argv.slice(5);
if (names.length < 2) throw new Error('name at least two variants, e.g. tree=/tmp/before tree=.');

const texts = rememberTexts();
const variants = names.map((name, i) => {
  const fields = variantFields(name);
  const engine = fields.engine ?? 'pglite';
  if (engine !== 'pglite' && engine !== 'postgres') throw new Error(`${name}: engine is pglite or postgres`);
  if (engine === 'postgres' && BENCH_DATABASE_URL === undefined) throw new Error(`${name}: set BENCH_DATABASE_URL or TEST_DATABASE_URL`);
  const schema = engine === 'postgres' ? `bench_remember_variant_${i}_${Date.now().toString(36)}` : undefined;
  return { name, tree: resolve(fields.tree ?? '.'), schema, nodeFlags: fields.flags?.split(' '), next: 0 };
});

const servers: ServerChild[] = [];
try {
  for (const variant of variants) {
    const { startServerChild } = (await import(pathToFileURL(join(variant.tree, 'bench/lib/server-child.ts')).href)) as { startServerChild: typeof StartServerChild };
    const env: Record<string, string> = variant.schema === undefined ? {} : { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: variant.schema };
    servers.push(await startServerChild({ embedder: 'local', env, ...(variant.nodeFlags === undefined ? {} : { nodeFlags: variant.nodeFlags }) }));
  }
  const tokens = await Promise.all(servers.map((server, i) => Promise.all(Array.from({ length: clients }, (_, c) => server.token(`variant-${i}-client-${c}`)))));

  async function run(i: number, duration: number): Promise<{ rate: number; cpuMs: number }> {
    const server = servers[i]!;
    const variant = variants[i]!;
    const before = await server.cpuMicros();
    const first = variant.next;
    const summary = await runFor(duration, clients, async (_index, worker) => {
      const text = texts.textFor('variants', variant.next++);
      await callTool(server.mcpUrl, tokens[i]![worker]!, 'remember', { text });
    });
    return { rate: summary.throughput, cpuMs: ((await server.cpuMicros()) - before) / 1000 / (variant.next - first) };
  }

  // The first run of each loads its model's weights into both workers and warms the JIT: not counted.
  for (const i of servers.keys()) await run(i, 5);
  // Every variant starts the counted runs at the same turn, so each remembers the same texts.
  const start = Math.max(...variants.map((variant) => variant.next));
  for (const variant of variants) variant.next = start;
  const runs = await alternatingRounds(servers.length, rounds, (i) => run(i, seconds));
  console.log(`remember, ${texts.description}, ${clients} clients, ${rounds} rounds of ${seconds} s per variant, alternating order`);
  for (const [i, variant] of variants.entries()) {
    const rates = runs[i]!.map((r) => r.rate);
    const cpu = runs[i]!.map((r) => r.cpuMs);
    console.log(
      `${variant.name.padEnd(40)} ${median(rates).toFixed(1).padStart(6)} remember/s (runs ${rates.map((r) => r.toFixed(1)).join(' ')})  CPU ${median(cpu).toFixed(1)} ms/remember (runs ${cpu.map((c) => c.toFixed(1)).join(' ')})`,
    );
  }
  for (const [i] of variants.entries()) {
    if (i === 0) continue;
    const ratios = runs[i]!.map((r, round) => r.rate / runs[0]![round]!.rate);
    console.log(`${variants[i]!.name} / ${variants[0]!.name}: ${median(ratios).toFixed(2)}× (per round ${ratios.map((r) => r.toFixed(2)).join(' ')})`);
  }
} finally {
  await Promise.all(servers.map((server) => server.close()));
  for (const variant of variants) if (variant.schema !== undefined) await dropBenchSchema(variant.schema);
}
