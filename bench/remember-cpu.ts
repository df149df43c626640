// Where remember's CPU goes: LoCoMo's turns remembered by `clients` concurrent clients for `seconds`, with the local
// model, and the CPU time each thread of the server process used (from /proc/<pid>/task/*/stat: the main thread,
// the model's worker threads, V8's and libuv's helpers, PGlite's thread), PostgreSQL's processes (all of them, on
// this machine) and this load generator, each divided by the turns remembered. The server runs in its own process.
// Run: npx tsx bench/remember-cpu.ts [pglite|postgres=postgres] [seconds=15] [clients=8] [rounds=1]   (Linux;
// postgres needs BENCH_DATABASE_URL or TEST_DATABASE_URL). Threads are named by id and by the name the system
// gives them; the main thread's id is the server's pid. Rounds are measured one after the other on the same server,
// so what a fresh process spends once (compiling, warming up) shows in the first and fades in the later ones.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { BENCH_DATABASE_URL, dropBenchSchema } from './lib/bench-server.js';
import { locomoTurns } from './lib/locomo.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { startServerChild } from './lib/server-child.js';

const engine = process.argv[2] ?? 'postgres';
const seconds = Number(process.argv[3] ?? 15);
const clients = Number(process.argv[4] ?? 8);
const rounds = Number(process.argv[5] ?? 1);
const turns = locomoTurns();
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString());

/** User + system clock ticks of a /proc stat line. */
const ticksOf = (stat: string): number => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const threadTicks = (pid: number): Map<string, number> =>
  new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [tid, ticksOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))]));
const threadName = (pid: number, tid: string): string => {
  try {
    return `"${readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()}"`;
  } catch {
    return '(ended)';
  }
};
const postgresTicks = (): number => {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') ticks += ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // The process ended while being read.
    }
  }
  return ticks;
};

const schema = `bench_remember_cpu_${Date.now().toString(36)}`;
const server = await startServerChild({
  embedder: 'local',
  env: engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : {},
});
try {
  const first = await server.token('first');
  await callTool(server.mcpUrl, first, 'remember', { text: 'The user was born in Lisbon', dedup_policy: 'insert' });
  const tokens = await Promise.all(Array.from({ length: clients }, (_, index) => server.token(`client-${index}`)));
  for (let round = 1; round <= rounds; round++) {
    const before = threadTicks(server.pid);
    const postgresBefore = postgresTicks();
    const ownBefore = process.cpuUsage();
    const summary = await runFor(seconds, clients, async (index, worker) => {
      await callTool(server.mcpUrl, tokens[worker]!, 'remember', { text: turns[index % turns.length]! });
    });
    const after = threadTicks(server.pid);
    const own = process.cpuUsage(ownBefore);
    const perTurn = (ms: number) => `${(ms / summary.count).toFixed(1)} ms`;
    console.log(`${engine}, ${clients} clients, round ${round} of ${seconds} s: ${summary.count} turns, ${summary.throughput.toFixed(1)} a second; CPU per turn:`);
    const threads = [...after].map(([tid, ticks]) => [tid, (ticks - (before.get(tid) ?? 0)) * TICK_MS] as const).filter(([, ms]) => ms / summary.count >= 0.05);
    for (const [tid, ms] of threads.sort((a, b) => b[1] - a[1])) console.log(`  thread ${tid}${tid === String(server.pid) ? ' (main)' : ''} ${threadName(server.pid, tid)}: ${perTurn(ms)}`);
    if (engine === 'postgres') console.log(`  PostgreSQL: ${perTurn((postgresTicks() - postgresBefore) * TICK_MS)}`);
    console.log(`  load generator: ${perTurn((own.user + own.system) / 1000)}`);
  }
} finally {
  await server.close();
  if (engine === 'postgres') await dropBenchSchema(schema);
}
