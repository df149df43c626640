// A benchmark's server in its own process (so the load generator does not share its event loop), driven
// over IPC by bench/lib/server-child.ts. Started with `node --import tsx --expose-gc`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { composeService } from '../../src/compose.js';
import { benchConfig, benchToken } from './bench-config.js';
import { syntheticEmbedder } from './synthetic-embedder.js';

export interface ServerProcessOptions {
  /** MEMORY_SERVICE_* settings (database, rate limit, ...). */
  readonly env: Record<string, string>;
  /** 'synthetic' leaves the embedding step out; 'local' is the real local model. */
  readonly embedder: 'local' | 'synthetic';
  /** Also serve a bare Fastify route answering `bareBody` to every POST (the baseline). */
  readonly bare?: boolean;
}

export type Request =
  | { type: 'token'; id: number; subject: string }
  | { type: 'stats'; id: number }
  | { type: 'metrics'; id: number }
  | { type: 'cpu'; id: number }
  | { type: 'close'; id: number };

const options = JSON.parse(process.env.BENCH_SERVER_OPTIONS ?? '{}') as ServerProcessOptions;
const dataDir = options.env.MEMORY_SERVICE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'memory-bench-'));
const config = benchConfig(dataDir, options.env);
const service = await composeService(config, options.embedder === 'synthetic' ? { embedder: syntheticEmbedder() } : {});
const address = await service.app.listen({ host: '127.0.0.1', port: 0 });

let bareUrl: string | undefined;
let bare: FastifyInstance | undefined;
if (options.bare === true) {
  // The same tools/list and ping answers the service gives, from a route with no hooks, auth or parsing.
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
  const app = Fastify();
  for (const method of ['tools/list', 'ping']) {
    app.post(`/${method}`, async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(bodies[method]));
  }
  bareUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  bare = app;
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
    case 'metrics':
      process.send!({ id: message.id, value: (await service.metrics.render()).body });
      break;
    case 'close':
      await Promise.all([service.close(), bare?.close()]);
      process.send!({ id: message.id, value: null });
      process.disconnect();
      break;
  }
});

process.send!({ type: 'ready', mcpUrl: `${address}/mcp`, bareUrl, engine: service.db.engine, pid: process.pid });
