import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeService, type Service } from '../../src/compose.js';
import { dropSchema } from '../../test/helpers/drop-schema.js';
import { benchConfig, benchToken } from './bench-config.js';

export type BenchEngine = 'pglite' | 'postgres';

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

/** Engines to measure: PGlite always, PostgreSQL when BENCH_DATABASE_URL (or TEST_DATABASE_URL) is set. */
export const benchEngines: BenchEngine[] = BENCH_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/** Drops a benchmark's PostgreSQL schema (its own connection, ended whatever happens). */
export function dropBenchSchema(schema: string): Promise<void> {
  return dropSchema(schema, BENCH_DATABASE_URL!);
}

export interface BenchServer {
  readonly service: Service;
  readonly mcpUrl: string;
  token(subject: string): Promise<string>;
  close(): Promise<void>;
}

/** A real server on a loopback port, as `serve` would run it (PGlite in a fresh data folder, or a fresh schema). */
export async function startBenchServer(engine: BenchEngine, env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-bench-'));
  const schema = `bench_${Date.now().toString(36)}`;
  const config = benchConfig(dataDir, {
    MEMORY_SERVICE_DATABASE_SCHEMA: schema,
    ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL! } : {}),
    ...env,
  });
  const service = await composeService(config);
  const address = await service.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    service,
    mcpUrl: `${address}/mcp`,
    token: (subject) => benchToken(service.stateFile!, config, subject),
    async close() {
      if (engine === 'postgres') {
        await service.db.withAllSubjects('inspecting rows', async () => undefined);
      }
      await service.close();
      if (engine === 'postgres') await dropBenchSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** tools/call over HTTP; throws on a protocol or tool error so a benchmark never counts failures as speed. */
export async function callTool(url: string, token: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as { result?: { isError?: boolean; structuredContent: Record<string, unknown> } };
  if (body.result === undefined || body.result.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
  return body.result.structuredContent;
}
