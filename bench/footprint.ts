// What a newcomer's machine pays, through the real CLI (node bin/memory-service.js, from the build):
// - `token issue` wall time (median of 5), a user's token, nothing else running;
// - cold start with an existing data folder: from spawning `serve` to the first recall answered over /mcp;
// - idle RSS of the whole process (every thread: model workers, PGlite's worker, the event loop) 5 s after that
//   first answer, by configuration, so that the differences say where the memory goes:
//     embedded default (PGlite + local model, LocalModelWorkers as the default), the same with 2 workers,
//     PGlite + the OpenAI-compatible provider (no model), and server mode (PostgreSQL + the OpenAI-compatible
//     provider; needs BENCH_DATABASE_URL or TEST_DATABASE_URL). The OpenAI-compatible server is a fake on loopback.
// Run: npx tsx bench/footprint.ts   (NODE=/path/to/node to run the service on another Node)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAIServer } from '../test/helpers/fake-openai-server.js';
import { freePort } from '../test/helpers/test-server.js';
import { BENCH_DATABASE_URL, dropBenchSchema } from './lib/bench-server.js';
import { build } from './lib/server-child.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'memory-service.js');
const NODE = process.env.NODE ?? process.execPath;
const MB = 1024;
/** A number from /proc/<pid>/status (kB for the memory fields). */
const status = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

function cli(args: string[], env: Record<string, string>, input?: string): string {
  return execFileSync(NODE, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, input, encoding: 'utf8' });
}

async function rpc(url: string, token: string, method: string, params: unknown): Promise<boolean> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).catch(() => undefined);
  if (response?.status !== 200) return false;
  const body = (await response.json()) as { result?: { isError?: boolean } };
  return body.result !== undefined && body.result.isError !== true;
}

interface Run {
  coldStartMs: number;
  idleRssMb: number;
  peakRssMb: number;
  threads: number;
}

/** Starts serve, waits for the first recall answered, lets it idle 5 s, reads its RSS, stops it. */
async function serveOnce(env: Record<string, string>, token: string): Promise<Run> {
  const url = `http://127.0.0.1:${env.MEMORY_SERVICE_PORT}`;
  const started = performance.now();
  const child = spawn(NODE, [BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', ...env, MEMORY_SERVICE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    while (!(await rpc(url, token, 'tools/call', { name: 'recall', arguments: { query: 'where was the user born' } }))) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
      if (performance.now() - started > 180_000) throw new Error('no recall answered within 180 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const coldStartMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const pid = child.pid!;
    return { coldStartMs, idleRssMb: status(pid, 'VmRSS') / MB, peakRssMb: status(pid, 'VmHWM') / MB, threads: status(pid, 'Threads') };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

build();
const version = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
console.log(`footprint: the real CLI from dist/, node ${version}, ${process.env.BENCH_NOTE ?? ''}`);
const fake = await startFakeOpenAIServer({ dimensions: 1536 });
const openai = { MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai', MEMORY_SERVICE_OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-bench-fake' };
const configurations: [string, Record<string, string>][] = [
  ['embedded default (PGlite, local model)', {}],
  ['PGlite, local model, LocalModelWorkers=2 (the default on 2 cores before issue 40)', { MEMORY_SERVICE_LOCAL_MODEL_WORKERS: '2' }],
  ['PGlite, OpenAI-compatible provider', openai],
];
const schema = `bench_footprint_${Date.now().toString(36)}`;
if (BENCH_DATABASE_URL !== undefined) {
  configurations.push(['server mode (PostgreSQL, OpenAI-compatible provider)', { ...openai, MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL, MEMORY_SERVICE_DATABASE_SCHEMA: schema }]);
}

const dirs: string[] = [];
try {
  for (const [name, extra] of configurations) {
    const home = mkdtempSync(join(tmpdir(), 'memory-footprint-'));
    dirs.push(home);
    // The same port for the token as for the server: the token names the server's URL (issuer, audience).
    const env = { HOME: home, MEMORY_SERVICE_PORT: String(await freePort()), ...extra };
    cli(['user', 'add', 'bench'], env, 'a bench password\n');
    const issue: number[] = [];
    let token = '';
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      token = cli(['token', 'issue', '--user', 'bench'], env).trim();
      issue.push(performance.now() - t0);
    }
    issue.sort((a, b) => a - b);
    // The first start makes the data folder (and migrates); the one measured finds it there.
    const first = await serveOnce(env, token);
    const runs = [await serveOnce(env, token), await serveOnce(env, token)];
    const cold = runs.map((run) => run.coldStartMs / 1000);
    const idle = runs.map((run) => run.idleRssMb);
    console.log(
      `${name}: token issue median ${issue[2]!.toFixed(0)} ms; first start ${(first.coldStartMs / 1000).toFixed(1)} s; ` +
        `cold start to first recall ${cold.map((s) => s.toFixed(1)).join(' / ')} s; idle RSS ${idle.map((mb) => mb.toFixed(0)).join(' / ')} MB ` +
        `(peak ${Math.max(...runs.map((run) => run.peakRssMb)).toFixed(0)} MB, ${runs[0]!.threads} threads)`,
    );
  }
} finally {
  await fake.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (BENCH_DATABASE_URL !== undefined) await dropBenchSchema(schema);
}
