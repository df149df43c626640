import { spawn, type ChildProcess } from 'node:child_process';
import { cliArgs, PROJECT_ROOT } from './cli-command.js';

export interface ServeProcess {
  readonly port: number;
  /** Its process id (for /proc/<pid>/status). */
  readonly pid: number;
  /** Where it listens: http://127.0.0.1:<port>. */
  readonly address: string;
  /** Its log so far: one pino JSON object per line of stdout. */
  logs(): Record<string, unknown>[];
  /** SIGTERM, then the exit code (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
}

/**
 * `memory-service serve` as a child process (the real CLI, built), with only the given environment; resolves
 * once /readyz answers 200.
 */
export async function startServeProcess(port: number, env: Record<string, string>): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, cliArgs('serve'), {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', MEMORY_SERVICE_HOST: '127.0.0.1', MEMORY_SERVICE_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${stderr}\n${stdout.slice(-2_000)}`);
    const ready = await fetch(`${address}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`serve on port ${port} was not ready within 90 s:\n${stderr}\n${stdout.slice(-2_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    port,
    pid: child.pid!,
    address,
    logs: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    stop,
  };
}
