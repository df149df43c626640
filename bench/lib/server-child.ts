import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PhaseStats, ServerProcessOptions } from './server-process.js';

export interface ProcessStats {
  rss: number;
  heapUsed: number;
  external: number;
  handles: number;
  pool: { total: number; idle: number; waiting: number };
}

export interface ServerChild {
  readonly mcpUrl: string;
  readonly pid: number;
  token(subject: string): Promise<string>;
  /** The service's own tools/list and ping answers (bodies), for the bare baseline to serve. */
  answers(): Promise<Record<string, string>>;
  /** Memory after a full GC, open handles and pool use, in the server process. */
  stats(): Promise<ProcessStats>;
  metrics(): Promise<string>;
  /** CPU time the server process has used so far (user + system, all threads), in microseconds. */
  cpuMicros(): Promise<number>;
  /** The event loop's delay and each kind of thread's CPU since the previous call (Linux). */
  phase(): Promise<PhaseStats>;
  close(): Promise<void>;
}

export interface BareChild {
  /** POST {url}/{name} answers bodies[name]. */
  readonly url: string;
  readonly pid: number;
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
}

interface Child {
  readonly ready: Record<string, unknown>;
  ask<T>(request: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

/** Forks a bench/lib script (run through tsx) and waits for its `ready` message; requests go over IPC. */
async function forkChild(script: string, env: Record<string, string>, stdoutFile?: string, nodeFlags: readonly string[] = []): Promise<Child> {
  const stdout = stdoutFile === undefined ? 'inherit' : openSync(stdoutFile, 'w');
  const child: ChildProcess = fork(fileURLToPath(new URL(script, import.meta.url)), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', ...nodeFlags, ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'inherit', 'ipc'],
  });
  if (typeof stdout === 'number') closeSync(stdout);
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 1;
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`benchmark child ${script} exited with ${code}`)));
    child.on('message', (message: { type?: string; id?: number; value?: unknown }) => {
      if (message.type === 'ready') resolve(message as Record<string, unknown>);
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
    ready,
    ask,
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await ask({ type: 'close' });
      await exited;
    },
  };
}

let built = false;
/**
 * Compiles src/ into dist/ (once per benchmark run), so the service measured is the code as it stands. The first
 * startServerChild does it; a benchmark that times the start calls it first, so the compiling is not counted.
 */
export function build(): void {
  if (built) return;
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: 'inherit' });
  built = true;
}

/** Starts bench/lib/server-process.ts, with the service from the build, in a child process and waits until it listens. */
export async function startServerChild(options: ServerProcessOptions): Promise<ServerChild> {
  build();
  const child = await forkChild('./server-process.ts', { BENCH_SERVER_OPTIONS: JSON.stringify(options) }, options.log?.file, options.nodeFlags);
  return {
    mcpUrl: child.ready.mcpUrl as string,
    pid: child.ready.pid as number,
    token: (subject) => child.ask<string>({ type: 'token', subject }),
    answers: () => child.ask<Record<string, string>>({ type: 'answers' }),
    stats: () => child.ask<ProcessStats>({ type: 'stats' }),
    metrics: () => child.ask<string>({ type: 'metrics' }),
    cpuMicros: () => child.ask<number>({ type: 'cpu' }),
    phase: () => child.ask<PhaseStats>({ type: 'phase' }),
    close: () => child.close(),
  };
}

/** Starts the bare baseline (bench/lib/bare-process.ts) in its own process. */
export async function startBareChild(bodies: Record<string, string>): Promise<BareChild> {
  const child = await forkChild('./bare-process.ts', { BENCH_BARE_BODIES: JSON.stringify(bodies) });
  return {
    url: child.ready.url as string,
    pid: child.ready.pid as number,
    cpuMicros: () => child.ask<number>({ type: 'cpu' }),
    close: () => child.close(),
  };
}
