// JSON-RPC overhead: tools/list and ping requests per second through the whole stack (HTTP, request id,
// metrics, Host/Origin checks, bearer-token verification, per-subject rate limit, JSON-RPC parsing and
// dispatch) against a bare Fastify route answering the same JSON, in the same run, as a ratio.
// The server runs in its own process; autocannon loads it from this one.
// Run: npx tsx bench/jsonrpc-overhead.ts [secondsPerRun=5] [connections=32]
import autocannon from 'autocannon';
import { startServerChild, type ServerChild } from './lib/server-child.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 32);

interface Rate {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU time per request: steady even when other work on the machine moves the request rate. */
  cpuMicros: number;
}

const ROUNDS = 3;
const median = (runs: Rate[]): Rate => [...runs].sort((x, y) => x.rps - y.rps)[Math.floor(runs.length / 2)]!;

async function load(server: ServerChild, url: string, body: string, headers: Record<string, string>, duration: number): Promise<Rate> {
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, connections, duration });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const cpuMicros = ((await server.cpuMicros()) - cpuBefore) / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMicros };
}

console.log(`JSON-RPC overhead: ${ROUNDS} alternating runs of ${seconds} s each (medians), ${connections} connections, node ${process.version}`);
const rows: string[] = [];
for (const limit of ['0', '1000000']) {
  const server = await startServerChild({ embedder: 'synthetic', bare: true, env: { MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: limit } });
  try {
    const auth = { authorization: `Bearer ${await server.token('overhead')}` };
    for (const method of ['tools/list', 'ping']) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} });
      const bareUrl = `${server.bareUrl}/${method === 'ping' ? 'ping' : 'tools/list'}`;
      // Warm-up (JIT, connection pools) for both, then alternating runs; the medians are reported, so a
      // burst of other work on the machine moves one run, not the figure.
      await load(server, bareUrl, body, {}, 2);
      await load(server, server.mcpUrl, body, auth, 2);
      const bareRuns: Rate[] = [];
      const fullRuns: Rate[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        bareRuns.push(await load(server, bareUrl, body, {}, seconds));
        fullRuns.push(await load(server, server.mcpUrl, body, auth, seconds));
      }
      const bare = median(bareRuns);
      const full = median(fullRuns);
      const cpu = (runs: Rate[]) => [...runs].map((run) => run.cpuMicros).sort((x, y) => x - y)[Math.floor(runs.length / 2)]!;
      rows.push(
        `${method.padEnd(10)} rate limit ${limit === '0' ? 'off' : 'on '}  bare ${bare.rps.toFixed(0).padStart(6)} req/s (p50 ${bare.p50} ms, p99 ${bare.p99} ms)` +
          `  /mcp ${full.rps.toFixed(0).padStart(6)} req/s (p50 ${full.p50} ms, p99 ${full.p99} ms)  ratio ${(full.rps / bare.rps).toFixed(2)}` +
          `  | server CPU per request: bare ${cpu(bareRuns).toFixed(0)} µs, /mcp ${cpu(fullRuns).toFixed(0)} µs, ratio ${(cpu(bareRuns) / cpu(fullRuns)).toFixed(2)}`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    await server.close();
  }
}
