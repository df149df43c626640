import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a Node 22 CLI with a minimal environment (no npm or test-runner variables) and never rejects. */
export function runNode(node: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      node,
      [...args],
      {
        cwd: options.cwd ?? tmpdir(),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.cwd ?? tmpdir(), NO_COLOR: '1', CI: 'true', ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
