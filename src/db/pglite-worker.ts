import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { PGliteEngine } from './pglite-engine.js';
import { openPGlite } from './pglite-open.js';
import { serialiseError, type ThreadReply, type ThreadRequest, type ThreadSettings } from './pglite-thread.js';

// The embedded database's own thread: it owns the PGlite instance (and its recovery, PGliteEngine), so a
// statement's WASM runs here and never holds up the server's event loop. Statements arrive one at a time from
// pglite-thread.ts in the order the driver sends them, and run in that order.

const settings = workerData as ThreadSettings;
const port = parentPort!;
const post = (reply: ThreadReply) => port.postMessage(reply);

const open = async (): Promise<PGlite> => {
  const instance = await openPGlite(settings.dataDir);
  // Session-level for migrations; every transaction also sets it locally.
  await instance.exec(`set search_path to ${settings.searchPath}`);
  return instance;
};

let engine: PGliteEngine<PGlite>;
try {
  engine = new PGliteEngine(await open(), {
    reopen: settings.reopenable ? open : undefined,
    onLost: (reason) => post({ type: 'lost', reason }),
    onReopened: () => post({ type: 'reopened' }),
  });
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'failed', error: serialiseError(error) });
  port.close();
}

/** One statement at a time: the next waits for the previous one's answer to be posted. */
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: ThreadRequest) => {
  queue = queue.then(() => handle(request));
});

async function handle(request: ThreadRequest): Promise<void> {
  if (request.type === 'close') {
    await engine.close().catch(() => undefined);
    post({ type: 'closed' });
    port.close();
    return;
  }
  try {
    const { rows, affectedRows } = await engine.query(request.text, request.params);
    post({ type: 'result', id: request.id, rows, affectedRows: affectedRows ?? 0 });
  } catch (error) {
    post({ type: 'error', id: request.id, error: serialiseError(error) });
  }
}
