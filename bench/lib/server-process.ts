// A benchmark's server in its own process (so the load generator does not share its event loop), driven
// over IPC by bench/lib/server-child.ts. Started with `node --import tsx --expose-gc`.
// The service itself runs from the build (dist/, which server-child brings up to date first), as `serve`
// does in production: tsx's on-the-fly transform adds work to every request (3.4 µs of tools/list's 34.9).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type * as Compose from '../../src/compose.js';
import type * as Logger from '../../src/logger.js';
import { benchConfig, benchToken } from './bench-config.js';
import { syntheticEmbedder } from './synthetic-embedder.js';

export interface ServerProcessOptions {
  /** MEMORY_SERVICE_* settings (database, rate limit, ...). */
  readonly env: Record<string, string>;
  /** 'synthetic' leaves the embedding step out; 'local' is the real local model. */
  readonly embedder: 'local' | 'synthetic';
  /** Log at this level to stdout, as `serve` does (server-child sends stdout to `file`); default: silent. */
  readonly log?: { readonly level: 'info' | 'warn'; readonly file: string };
  /** Extra Node/V8 flags for the server process (e.g. `--max-semi-space-size=32`). */
  readonly nodeFlags?: readonly string[];
}

export type Request =
  | { type: 'token'; id: number; subject: string }
  | { type: 'stats'; id: number }
  | { type: 'metrics'; id: number }
  | { type: 'cpu'; id: number }
  | { type: 'answers'; id: number }
  | { type: 'close'; id: number }
  | { type: 'phase'; id: number };

/** What the server's threads did since the previous `phase` request. */
export interface PhaseStats {
  /** The event loop's delay (perf_hooks.monitorEventLoopDelay, 10 ms resolution), ms. */
  loopDelay: { p50: number; p99: number; max: number };
  /** CPU used, in cores (CPU seconds per second): the main thread, other threads at its priority, threads below it. */
  cores: { main: number; samePriority: number; lowered: number };
}

const build = new URL('../../dist/', import.meta.url);
const { composeService } = (await import(new URL('compose.js', build).href)) as typeof Compose;
const { createLogger } = (await import(new URL('logger.js', build).href)) as typeof Logger;

const options = JSON.parse(process.env.BENCH_SERVER_OPTIONS ?? '{}') as ServerProcessOptions;
/** A data folder made here is removed on close; one the benchmark named is the benchmark's to keep. */
const ownDataDir = options.env.MEMORY_SERVICE_DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'memory-bench-')) : undefined;
const dataDir = options.env.MEMORY_SERVICE_DATA_DIR ?? ownDataDir!;
const config = benchConfig(dataDir, options.env);
const logger = options.log === undefined ? undefined : createLogger(options.log.level);
const service = await composeService(config, {
  ...(options.embedder === 'synthetic' ? { embedder: syntheticEmbedder() } : {}),
  ...(logger === undefined ? {} : { logger }),
});
const address = await service.app.listen({ host: '127.0.0.1', port: 0 });

/** The answers the service gives to tools/list and ping (the bare baseline serves the same bytes). */
async function answers(): Promise<Record<string, string>> {
  const token = await issue('bare');
  const answer = async (method: string) => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { host: new URL(config.baseUrl).host, 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: { jsonrpc: '2.0', id: 1, method, params: {} },
    });
    return response.body;
  };
  const bodies: Record<string, string> = { 'tools/list': await answer('tools/list'), ping: await answer('ping') };
  if (!bodies['tools/list']!.includes('"tools"')) throw new Error(`unexpected tools/list answer: ${bodies['tools/list']}`);
  return bodies;
}

function issue(subject: string): Promise<string> {
  return benchToken(service.stateFile!, config, subject, 3600 * 6);
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
/** CPU time of each thread of this process, in clock ticks, with its nice value (Linux /proc). */
function threadTimes(): Map<string, { ticks: number; nice: number }> {
  const times = new Map<string, { ticks: number; nice: number }>();
  for (const thread of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${thread}/stat`, 'utf8');
      // Fields after the command name: state is 0, utime 11, stime 12, nice 16.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      times.set(thread, { ticks: Number(fields[11]) + Number(fields[12]), nice: Number(fields[16]) });
    } catch {
      // The thread ended while we looked.
    }
  }
  return times;
}
/** Linux's USER_HZ: /proc reports CPU time in hundredths of a second. */
const TICKS_PER_SECOND = 100;
let phaseStart = { at: performance.now(), times: threadTimes() };
function phaseStats(): PhaseStats {
  const now = { at: performance.now(), times: threadTimes() };
  const seconds = (now.at - phaseStart.at) / 1000;
  const cores = { main: 0, samePriority: 0, lowered: 0 };
  const base = getPriority();
  for (const [thread, { ticks, nice }] of now.times) {
    const used = (ticks - (phaseStart.times.get(thread)?.ticks ?? 0)) / TICKS_PER_SECOND / seconds;
    if (thread === String(process.pid)) cores.main += used;
    else if (nice > base) cores.lowered += used;
    else cores.samePriority += used;
  }
  const ms = (ns: number) => ns / 1e6;
  const stats = { loopDelay: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) }, cores };
  loopDelay.reset();
  phaseStart = now;
  return stats;
}

process.on('message', async (message: Request) => {
  switch (message.type) {
    case 'phase':
      process.send!({ id: message.id, value: phaseStats() });
      break;
    case 'token':
      process.send!({ id: message.id, value: await issue(message.subject) });
      break;
    case 'stats': {
      // After a full collection, heapUsed is what the process keeps, not garbage waiting to be collected.
      (globalThis as { gc?: () => void }).gc?.();
      const memory = process.memoryUsage();
      process.send!({
        id: message.id,
        value: { rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external, handles: process.getActiveResourcesInfo().length, pool: service.db.poolStats() },
      });
      break;
    }
    case 'cpu': {
      const { user, system } = process.cpuUsage();
      process.send!({ id: message.id, value: user + system });
      break;
    }
    case 'answers':
      process.send!({ id: message.id, value: await answers() });
      break;
    case 'metrics':
      process.send!({ id: message.id, value: (await service.metrics.render()).body });
      break;
    case 'close':
      await service.close();
      if (ownDataDir !== undefined) rmSync(ownDataDir, { recursive: true, force: true });
      process.send!({ id: message.id, value: null });
      process.disconnect();
      break;
  }
});

process.send!({ type: 'ready', mcpUrl: `${address}/mcp`, engine: service.db.engine, pid: process.pid });
