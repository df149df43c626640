import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));

/** Runs `script` in a child process with `logger` = createLogger('info') on the real stdout (a pipe). */
function runLogging(script: string): {
  exit: Promise<{ code: number | null; signal: string | null; lines: string[] }>;
  /** Resolves once stdout has carried `text`. */
  seen: (text: string) => Promise<void>;
  tell: () => void;
} {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const logger = createLogger('info');\n${script}`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const chunks: Buffer[] = [];
  const waiting: { text: string; resolve: () => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    const output = Buffer.concat(chunks).toString('utf8');
    for (const wait of waiting.filter((w) => output.includes(w.text))) wait.resolve();
  });
  const seen = (text: string) => new Promise<void>((resolve) => waiting.push({ text, resolve }));
  const exit = new Promise<{ code: number | null; signal: string | null; lines: string[] }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, lines: Buffer.concat(chunks).toString('utf8').split('\n').filter((line) => line !== '') })),
  );
  return { exit, seen, tell: () => child.stdin.end('go\n') };
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

  it('writes lines longer than its buffer whole and in order between short ones, while the process runs', async () => {
    // Lines of 30 kB and 200 kB (multi-byte characters, so more bytes than characters) do not fit the 64 kB the
    // logger keeps for pending lines; spread over event-loop turns, so they are written on the way, not at the exit.
    const { exit, seen, tell } = runLogging(`
      const sizes = [10, 30000, 20, 200000, 5, 21000, 21900, 40];
      let i = 0;
      const next = () => {
        if (i === sizes.length) return logger.info('done');
        logger.info({ i, text: 'é記'.repeat(sizes[i] / 2) }, 'sized');
        i++;
        setTimeout(next, i % 2 === 0 ? 0 : 15);
      };
      next();
      process.stdin.once('data', () => process.exit(7));
    `);
    await seen('"msg":"done"');
    tell();
    const { code, lines } = await exit;
    expect(code).toBe(7);
    const sizes = [10, 30000, 20, 200000, 5, 21000, 21900, 40];
    expect(lines).toHaveLength(sizes.length + 1);
    sizes.forEach((size, i) => {
      const parsed = JSON.parse(lines[i]!) as { i: number; text: string };
      expect(parsed.i).toBe(i);
      expect(parsed.text).toBe('é記'.repeat(size / 2));
    });
  }, 60_000);

  it('writes the line of a quiet moment without waiting for more lines or the exit', async () => {
    // The child logs one line and waits to be told to go on: held back until more lines or the exit, it would never come.
    const { exit, seen, tell } = runLogging(`
      logger.info('first');
      process.stdin.once('data', () => {
        logger.info('second');
        setTimeout(() => logger.info('third'), 5);
        setTimeout(() => process.exit(7), 200);
      });
    `);
    await seen('"msg":"first"');
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

  it('goes on writing lines after a fatal one that the process survived', async () => {
    const { exit, seen, tell } = runLogging(`
      logger.fatal('not quite');
      logger.info('after');
      process.stdin.once('data', () => process.exit(7));
    `);
    // Told to exit only once 'after' is out: a line stuck behind the fatal one would never let the child go.
    await seen('"msg":"after"');
    tell();
    const { code, lines } = await exit;
    expect(code).toBe(7);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['not quite', 'after']);
  }, 60_000);

  it('holds at most 16 MiB of lines while nobody reads stdout, and stays up', async () => {
    // 60,000 lines of ~1.1 kB (66 MB) logged while the parent does not read the pipe; the child then reports the
    // memory its buffers hold, on stderr.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const logger = createLogger('info');
        const line = 'x'.repeat(1000);
        let n = 0;
        const burst = () => {
          for (let i = 0; i < 2000; i++) logger.info({ n: n++, line }, 'filler');
          if (n < 60000) setImmediate(burst);
          else setTimeout(() => process.stderr.write('held ' + process.memoryUsage().arrayBuffers + '\\n'), 200);
        };
        burst();
        process.stdin.once('data', () => process.exit(7));`,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child.stdout.pause();
    const held = await new Promise<number>((resolve) => {
      let text = '';
      child.stderr.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const match = /held (\d+)/.exec(text);
        if (match) resolve(Number(match[1]));
      });
    });
    expect(held).toBeLessThan(24 * 1024 * 1024);
    child.stdout.resume();
    child.stdin.end('go\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
    expect(code).toBe(7);
  }, 60_000);
});
