// What appending a log line costs sonic-boom (pino's destination) while a write is in flight, in its default string
// mode against buffer mode (what src/logger.ts uses), and a synchronous write per line for scale. 100,000 lines of
// ~220 bytes appended in one loop into a file, so all but the first wait behind a write in flight.
// Run: npx tsx bench/log-writes.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';

const LINES = 100_000;
const dir = mkdtempSync(join(tmpdir(), 'log-writes-'));
const line = (i: number) =>
  `${JSON.stringify({ level: 30, time: Date.now(), pid: 1, hostname: 'h', reqId: i, req: { method: 'POST', url: '/mcp', remoteAddress: '127.0.0.1' }, rpc: { method: 'tools/list' }, res: { statusCode: 200 }, responseTime: 0.123, msg: 'request completed' })}\n`;

const modes: Record<string, (boomFile: string) => (i: number) => void> = {
  'string mode, asynchronous (pino.destination default)': (file) => {
    const boom = pino.destination({ dest: file, sync: false });
    return (i) => boom.write(line(i));
  },
  'buffer mode, asynchronous (src/logger.ts)': (file) => {
    const boom = pino.destination({ dest: file, sync: false, contentMode: 'buffer' });
    return (i) => boom.write(Buffer.from(line(i)) as unknown as string);
  },
  'string mode, synchronous (a write per line)': (file) => {
    const boom = pino.destination({ dest: file, sync: true });
    return (i) => boom.write(line(i));
  },
};

try {
  for (let round = 0; round < 2; round++) {
    for (const [name, open] of Object.entries(modes)) {
      const append = open(join(dir, `${round}-${name.length}.log`));
      const start = process.hrtime.bigint();
      for (let i = 0; i < LINES; i++) append(i);
      const perLine = Number(process.hrtime.bigint() - start) / LINES / 1000;
      console.log(`${name.padEnd(52)} ${perLine.toFixed(2)} µs a line`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
