import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cliArgs } from './cli-command.js';

/** The real CLI's `serve` in a child process, as an operator runs it. */
export interface ServerProcess {
  readonly url: string;
  readonly mcpUrl: string;
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
  /** Resolves once /readyz answers 200 (the database opened, migrations current, the model loaded). */
  ready(timeoutMs?: number): Promise<void>;
}

export function startServerProcess(env: NodeJS.ProcessEnv, port: number): ServerProcess {
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, cliArgs('serve'), { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    url,
    mcpUrl: `${url}/mcp`,
    child,
    output: () => output,
    exited,
    async ready(timeoutMs = 150_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited early (${child.exitCode ?? child.signalCode}):\n${output}`);
        const ok = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
        if (ok) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`the server did not become ready:\n${output}`);
    },
  };
}

/** A token from the built-in authorization server, issued by the CLI against the same state file. */
export function issueToken(env: NodeJS.ProcessEnv, subject: string): Promise<string> {
  return new Promise<string>((resolve, reject) =>
    execFile(process.execPath, cliArgs('token', 'issue', '--sub', subject), { env: { PATH: process.env.PATH, ...env } }, (error, stdout, stderr) =>
      error === null ? resolve(stdout.trim().split('\n').pop()!) : reject(new Error(`token issue failed: ${stderr}`, { cause: error })),
    ),
  );
}
