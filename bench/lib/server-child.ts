import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerProcessOptions } from './server-process.js';

export interface ProcessStats {
  rss: number;
  heapUsed: number;
  external: number;
  handles: number;
  pool: { total: number; idle: number; waiting: number };
}

export interface ServerChild {
  readonly mcpUrl: string;
  /** Base URL of the bare baseline route (POST {bareUrl}/tools/list or /ping), when asked for. */
  readonly bareUrl: string | undefined;
  readonly pid: number;
  token(subject: string): Promise<string>;
  /** Memory after a full GC, open handles and pool use, in the server process. */
  stats(): Promise<ProcessStats>;
  metrics(): Promise<string>;
  /** CPU time the server process has used so far (user + system, all threads), in microseconds. */
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
}

/** Starts bench/lib/server-process.ts in a child process and waits until it listens. */
export async function startServerChild(options: ServerProcessOptions): Promise<ServerChild> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./server-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
    env: { ...process.env, BENCH_SERVER_OPTIONS: JSON.stringify(options) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 1;
  const ready = await new Promise<{ mcpUrl: string; bareUrl?: string; pid: number }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`benchmark server exited with ${code}`)));
    child.on('message', (message: { type?: string; id?: number; value?: unknown }) => {
      if (message.type === 'ready') resolve(message as { mcpUrl: string; bareUrl?: string; pid: number });
      else if (message.id !== undefined) pending.get(message.id)?.(message.value);
    });
  });
  const ask = <T>(request: Record<string, unknown>): Promise<T> =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, (value) => {
        pending.delete(id);
        resolve(value as T);
      });
      child.send({ ...request, id });
    });
  return {
    mcpUrl: ready.mcpUrl,
    bareUrl: ready.bareUrl,
    pid: ready.pid,
    token: (subject) => ask<string>({ type: 'token', subject }),
    stats: () => ask<ProcessStats>({ type: 'stats' }),
    metrics: () => ask<string>({ type: 'metrics' }),
    cpuMicros: () => ask<number>({ type: 'cpu' }),
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await ask({ type: 'close' });
      await exited;
    },
  };
}
