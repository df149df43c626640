import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));

/** Runs `script` in a child process with `logger` = createLogger('info') on the real stdout (a pipe). */
function runLogging(script: string): { exit: Promise<{ code: number | null; signal: string | null; lines: string[] }>; firstOutput: Promise<void>; tell: () => void } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const logger = createLogger('info');\n${script}`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const chunks: Buffer[] = [];
  const firstOutput = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      resolve();
    }),
  );
  const exit = new Promise<{ code: number | null; signal: string | null; lines: string[] }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, lines: Buffer.concat(chunks).toString('utf8').split('\n').filter((line) => line !== '') })),
  );
  return { exit, firstOutput, tell: () => child.stdin.end('go\n') };
}

describe('log lines on stdout', () => {
  it('writes every line of a burst, whole and in order, when the process exits right after it', async () => {
    const { exit } = runLogging(`
      for (let i = 0; i < 20000; i++) logger.info({ i, text: 'façade ✓ 記憶 ' + 'x'.repeat(i % 300) }, 'burst');
      process.exit(7);
    `);
    const { code, lines: written } = await exit;
    expect(code).toBe(7);
    expect(written).toHaveLength(20000);
    written.forEach((line, i) => {
      const parsed = JSON.parse(line) as { i: number; text: string; msg: string };
      expect(parsed.i).toBe(i);
      expect(parsed.text).toBe(`façade ✓ 記憶 ${'x'.repeat(i % 300)}`);
    });
  }, 60_000);

  it('writes the line of a quiet moment without waiting for more lines or the exit', async () => {
    // The child logs one line and waits to be told to go on: held back until more lines or the exit, it would never come.
    const { exit, firstOutput, tell } = runLogging(`
      logger.info('first');
      process.stdin.once('data', () => {
        logger.info('second');
        setTimeout(() => logger.info('third'), 5);
        setTimeout(() => process.exit(7), 200);
      });
    `);
    await firstOutput;
    tell();
    const { code, lines } = await exit;
    expect(code).toBe(7);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['first', 'second', 'third']);
  }, 60_000);

  it('writes what is pending when fatal is logged, even if the process is killed outright next', async () => {
    const { exit } = runLogging(`
      logger.info('quiet');
      setTimeout(() => {
        for (let i = 0; i < 50; i++) logger.info({ i }, 'before');
        logger.fatal('going down');
        process.kill(process.pid, 'SIGKILL');
      }, 50);
    `);
    const { signal, lines } = await exit;
    expect(signal).toBe('SIGKILL');
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['quiet', ...Array(50).fill('before'), 'going down']);
  }, 60_000);
});
