// One busy subject must not stall the others. Subject B recalls at a steady pace, first on an idle server, then
// while subject A remembers 16,000-character texts as fast as its rate limit lets it (RateLimitPerMinute 600, the
// default; A sends a little faster and its 429s are counted). Reports B's recall p50/p99 in both phases and their
// ratio, from one run, on PGlite and (BENCH_DATABASE_URL or TEST_DATABASE_URL) PostgreSQL. The server runs in its
// own process with the real local model (LocalModelWorkers at its default: one per core, at most 4); this
// process is the load generator. Target: p50 under load at most 1.5x idle, p99 under load at most 100 ms.
// Per phase it also reports, from inside the server (Linux), the event loop's delay and the CPU its threads used:
// the main thread, the others at its priority (short-text model workers, PGlite's own thread, V8 and libuv
// helpers), and the lowered-priority ones (bulk model workers).
// Run: npx tsx bench/fairness.ts [secondsPerPhase=60] [aPerSecond=12]
import { BENCH_DATABASE_URL, benchEngines, dropBenchSchema } from './lib/bench-server.js';
import { callTool, postJson } from './lib/rpc-client.js';
import { startServerChild } from './lib/server-child.js';
import type { PhaseStats } from './lib/server-process.js';
import { summarise, type Summary } from './lib/stats.js';
import { memoryText, queryText } from './lib/synthetic-embedder.js';

const seconds = Number(process.argv[2] ?? 60);
const aPerSecond = Number(process.argv[3] ?? 12);
/** B's pace: well inside its own limit, and steady, so both phases ask the same of the server. */
const B_PER_SECOND = 5;
/** A's client keeps at most this many remembers in flight (a real client waits for answers too). */
const A_MAX_IN_FLIGHT = 16;
const LONG_TEXT_CHARS = 16_000;
const SEED = 200;

const fmt = (s: Summary) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms (${s.count} recalls)`;
const fmtServer = ({ loopDelay, cores }: PhaseStats) =>
  `event-loop delay p99 ${loopDelay.p99.toFixed(1)} ms (max ${loopDelay.max.toFixed(1)}), CPU cores: main thread ${cores.main.toFixed(2)}, ` +
  `other threads at its priority ${cores.samePriority.toFixed(2)}, at lowered priority ${cores.lowered.toFixed(2)}`;

/** A 16,000-character text of ordinary sentences, different each time (no near-duplicate shortcuts). */
function longText(index: number): string {
  let text = '';
  for (let i = 0; text.length < LONG_TEXT_CHARS; i++) text += `${memoryText(index * 1_000 + i)}. `;
  return text.slice(0, LONG_TEXT_CHARS);
}

/** Calls `operation` every 1/rate seconds for `seconds` (open loop: a slow answer does not delay the next call). */
async function paced(rate: number, seconds: number, operation: (index: number) => Promise<void>, maxInFlight = Infinity): Promise<{ skipped: number }> {
  const interval = 1000 / rate;
  const started = performance.now();
  const running = new Set<Promise<void>>();
  let skipped = 0;
  for (let index = 0; performance.now() - started < seconds * 1000; index++) {
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (running.size >= maxInFlight) {
      skipped++;
      continue;
    }
    const call = operation(index).finally(() => running.delete(call));
    running.add(call);
  }
  await Promise.all(running);
  return { skipped };
}

console.log(
  `fairness benchmark: B recalls at ${B_PER_SECOND}/s for ${seconds} s idle, then ${seconds} s while A remembers ${LONG_TEXT_CHARS}-character texts at ${aPerSecond}/s (limit 600/min), node ${process.version}`,
);

for (const engine of benchEngines) {
  const schema = `bench_fairness_${process.pid}_${Date.now().toString(36)}`;
  const server = await startServerChild({
    embedder: 'local',
    env: {
      MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '600',
      MEMORY_SERVICE_DATABASE_SCHEMA: engine === 'postgres' ? schema : 'public',
      ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL! } : {}),
    },
  });
  try {
    const [a, b] = await Promise.all([server.token('subject-a'), server.token('subject-b')]);
    // B has memories to search; seeded at a pace within its limit.
    for (let i = 0; i < SEED; i++) await callTool(server.mcpUrl, b, 'remember', { text: memoryText(i), dedup_policy: 'insert' });

    const recallB = async (latencies: number[], index: number) => {
      const t0 = performance.now();
      await callTool(server.mcpUrl, b, 'recall', { query: queryText(index), limit: 10 });
      latencies.push(performance.now() - t0);
    };
    for (let i = 0; i < 20; i++) await recallB([], i);

    await server.phase();
    const idleLatencies: number[] = [];
    const idleStarted = performance.now();
    await paced(B_PER_SECOND, seconds, (index) => recallB(idleLatencies, index));
    const idle = summarise(idleLatencies, performance.now() - idleStarted);
    const idleServer = await server.phase();

    const aOutcome = { stored: 0, limited: 0, other: 0, latencies: [] as number[] };
    const loadLatencies: number[] = [];
    const loadStarted = performance.now();
    const loadA = paced(
      aPerSecond,
      seconds,
      async (index) => {
        const t0 = performance.now();
        const { status, text } = await postJson(server.mcpUrl, a, {
          jsonrpc: '2.0',
          id: index,
          method: 'tools/call',
          params: { name: 'remember', arguments: { text: longText(index), dedup_policy: 'insert' } },
        });
        if (status === 429) aOutcome.limited++;
        else if (status === 200 && !text.includes('"isError":true')) {
          aOutcome.stored++;
          aOutcome.latencies.push(performance.now() - t0);
        } else aOutcome.other++;
      },
      A_MAX_IN_FLIGHT,
    );
    // B starts once A's first texts are in the model's queue.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const loadB = paced(B_PER_SECOND, seconds - 1, (index) => recallB(loadLatencies, 10_000 + index));
    const [{ skipped }] = await Promise.all([loadA, loadB]);
    const loaded = summarise(loadLatencies, performance.now() - loadStarted);
    const loadedServer = await server.phase();
    const a50 = summarise(aOutcome.latencies, 1).p50;

    const row =
      `${engine}: B recall idle ${fmt(idle)} | under load ${fmt(loaded)} | ratio p50 ${(loaded.p50 / idle.p50).toFixed(2)}x, p99 ${(loaded.p99 / idle.p99).toFixed(2)}x` +
      ` | A: ${aOutcome.stored} stored (p50 ${a50.toFixed(0)} ms), ${aOutcome.limited} answered 429, ${aOutcome.other} other errors, ${skipped} not sent (${A_MAX_IN_FLIGHT} in flight)` +
      ` | target p50 <= 1.5x: ${loaded.p50 <= 1.5 * idle.p50 ? 'met' : 'MISSED'}, p99 <= 100 ms: ${loaded.p99 <= 100 ? 'met' : 'MISSED'}`;
    console.log(row);
    console.log(`${engine} server, idle: ${fmtServer(idleServer)}\n${engine} server, under load: ${fmtServer(loadedServer)}`);

  } finally {
    await server.close();
    if (engine === 'postgres') await dropBenchSchema(schema);
  }
}
