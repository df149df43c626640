import { spawn } from 'node:child_process';
import { cliArgs, PROJECT_ROOT } from './cli-command.js';

export interface CliResult {
  readonly code: number | null;
  /** The signal that ended it: SIGKILL when it outlived `killAfterMs`. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built memory-service CLI, with a controlled environment; killed if still running after `killAfterMs`. */
export function runCli(args: readonly string[], env: Record<string, string>, stdin?: string, killAfterMs?: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), {
      cwd: env.CWD ?? PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}
