// JSON-RPC overhead: `tools/list` and `ping` through the whole /mcp stack (request id, logging, metrics,
// CORS, Host/Origin checks, bearer-token verification, per-subject rate limit, JSON-RPC parsing and
// dispatch) against a bare Fastify route answering the same bytes, as a ratio measured in one run.
// Three processes: the service, the bare route, and this one generating the load (autocannon).
// The service runs as production would: LogLevel = info (JSON lines on stdout, sent to a file), the rate
// limit on (high enough never to refuse), metrics recorded and served.
// Run: npx tsx bench/jsonrpc-overhead.ts [secondsPerRun=5] [connections=32] [logLevel=info]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startBareChild, startServerChild } from './lib/server-child.js';
import { median } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 32);
const logLevel = (process.argv[4] ?? 'info') as 'info' | 'warn';

interface Rate {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU time per request: steadier than the rate when other work shares the machine. */
  cpuMicros: number;
}

const ROUNDS = 3;

async function load(cpu: () => Promise<number>, url: string, body: string, headers: Record<string, string>, duration: number): Promise<Rate> {
  const cpuBefore = await cpu();
  const result = await autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, connections, duration });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const cpuMicros = ((await cpu()) - cpuBefore) / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMicros };
}

const logDir = mkdtempSync(join(tmpdir(), 'memory-bench-log-'));
const logFile = join(logDir, 'server.log');
const server = await startServerChild({
  embedder: 'synthetic',
  log: { level: logLevel, file: logFile },
  env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '1000000', MEMORY_SERVICE_METRICS_TOKEN: 'bench-metrics-token-0123456789abcdef' },
});
const bare = await startBareChild(await server.answers());
console.log(
  `JSON-RPC overhead: ${ROUNDS} alternating runs of ${seconds} s each (medians), ${connections} connections, node ${process.version}; ` +
    `service (pid ${server.pid}) LogLevel=${logLevel}, rate limit on, metrics on; bare route (pid ${bare.pid}); load generator (pid ${process.pid})`,
);
try {
  const metricsBefore = await server.metrics();
  if (!metricsBefore.includes('memory_service_')) throw new Error('metrics are not recorded');
  for (const method of ['tools/list', 'ping']) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} });
    const bareUrl = `${bare.url}/${method}`;
    // Warm-up (JIT, connections) for both, then alternating runs; medians, so a burst of other work on
    // the machine moves one run, not the figure.
    await load(bare.cpuMicros, bareUrl, body, {}, 2);
    // A subject per run: the rate limit (at most 1,000,000 a minute) counts per subject, and a fast service
    // answers more than that to one subject within a minute of runs.
    const auth = async (run: string) => ({ authorization: `Bearer ${await server.token(`overhead-${method}-${run}`)}` });
    await load(server.cpuMicros, server.mcpUrl, body, await auth('warm-up'), 2);
    const bareRuns: Rate[] = [];
    const fullRuns: Rate[] = [];
    const logBytes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bareRuns.push(await load(bare.cpuMicros, bareUrl, body, {}, seconds));
      const logBefore = statSync(logFile).size;
      const full = await load(server.cpuMicros, server.mcpUrl, body, await auth(String(round)), seconds);
      fullRuns.push(full);
      logBytes.push((statSync(logFile).size - logBefore) / (full.rps * seconds));
    }
    const rps = (runs: Rate[]) => median(runs.map((run) => run.rps));
    const cpu = (runs: Rate[]) => median(runs.map((run) => run.cpuMicros));
    const p50 = (runs: Rate[]) => median(runs.map((run) => run.p50));
    console.log(
      `${method.padEnd(10)} bare ${rps(bareRuns).toFixed(0).padStart(6)} req/s (p50 ${p50(bareRuns)} ms)` +
        `  /mcp ${rps(fullRuns).toFixed(0).padStart(6)} req/s (p50 ${p50(fullRuns)} ms)  ratio ${(rps(fullRuns) / rps(bareRuns)).toFixed(2)}` +
        `  | CPU per request: bare ${cpu(bareRuns).toFixed(0)} µs, /mcp ${cpu(fullRuns).toFixed(0)} µs, ratio ${(cpu(bareRuns) / cpu(fullRuns)).toFixed(2)}` +
        `  | log ${median(logBytes).toFixed(0)} bytes/request` +
        `  | runs /mcp÷bare: ${fullRuns.map((run, i) => (run.rps / bareRuns[i]!.rps).toFixed(2)).join(' ')}`,
    );
  }
} finally {
  await Promise.all([server.close(), bare.close()]);
  rmSync(logDir, { recursive: true, force: true });
}
