// A benchmark's server in its own process (so the load generator does not share its event loop), driven
// over IPC by bench/lib/server-child.ts. Started with `node --import tsx --expose-gc`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeService } from '../../src/compose.js';
import { createLogger } from '../../src/logger.js';
import { benchConfig, benchToken } from './bench-config.js';
import { syntheticEmbedder } from './synthetic-embedder.js';

export interface ServerProcessOptions {
  /** MEMORY_SERVICE_* settings (database, rate limit, ...). */
  readonly env: Record<string, string>;
  /** 'synthetic' leaves the embedding step out; 'local' is the real local model. */
  readonly embedder: 'local' | 'synthetic';
  /** Log at this level to stdout, as `serve` does (server-child sends stdout to `file`); default: silent. */
  readonly log?: { readonly level: 'info' | 'warn'; readonly file: string };
}

export type Request =
  | { type: 'token'; id: number; subject: string }
  | { type: 'stats'; id: number }
  | { type: 'metrics'; id: number }
  | { type: 'cpu'; id: number }
  | { type: 'answers'; id: number }
  | { type: 'close'; id: number };

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

process.on('message', async (message: Request) => {
  switch (message.type) {
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
