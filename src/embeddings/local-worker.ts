/**
 * One worker thread of the local provider: lowers its own CPU priority if asked (a bulk worker), loads the model
 * once (from the module named in workerData, normally local-model.ts), then embeds one batch per message. The
 * main thread validates and normalises the vectors.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { LocalModel } from './local-model.js';

export interface WorkerSettings {
  readonly modelModule: string;
  /** How much to lower this thread's priority (added to its nice value); 0 leaves it. */
  readonly niceIncrement: number;
}

export interface WorkerRequest {
  readonly id: number;
  readonly texts: readonly string[];
}

/** How the worker's priority came out: its thread id (when known) and, if it could not lower it, why. */
export interface WorkerPriority {
  readonly thread: number | undefined;
  readonly problem: string | undefined;
}

export type WorkerReply =
  | ({ readonly type: 'ready' } & WorkerPriority)
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'vectors'; readonly id: number; readonly vectors: unknown }
  | { readonly type: 'error'; readonly id: number; readonly message: string };

/**
 * The tokenizer yields no tokens for a text that is empty after NFKC normalisation, and the model then silently
 * drops (or misaligns) that row. A single space embeds fine.
 */
const modelInput = (text: string): string => (text.normalize('NFKC').length === 0 ? ' ' : text);

const port = parentPort!;
const send = (reply: WorkerReply): void => port.postMessage(reply);
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * On Linux, /proc/thread-self names this thread ("<pid>/task/<tid>"), and setpriority() on a thread id sets that
 * thread's nice value alone, not the process's. Elsewhere (no /proc) the worker keeps the process's priority.
 */
function lowerPriority(increment: number): WorkerPriority {
  let thread: number | undefined;
  try {
    thread = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (!Number.isInteger(thread) || thread <= 0) return { thread: undefined, problem: 'no thread id in /proc/thread-self' };
    // Relative to the thread's own priority, which it inherited from the process: lowering needs no privilege.
    if (increment > 0) setPriority(thread, Math.min(19, getPriority(thread) + increment));
    return { thread, problem: undefined };
  } catch (error) {
    return { thread, problem: message(error) };
  }
}

const settings = workerData as WorkerSettings;
let model: LocalModel;
try {
  const priority = lowerPriority(settings.niceIncrement);
  const { loadModel } = (await import(settings.modelModule)) as { loadModel: () => Promise<LocalModel> };
  model = await loadModel();
  send({ type: 'ready', ...priority });
} catch (error) {
  send({ type: 'failed', message: message(error) });
  port.close();
}

port.on('message', async ({ id, texts }: WorkerRequest) => {
  try {
    send({ type: 'vectors', id, vectors: await model.embed(texts.map(modelInput)) });
  } catch (error) {
    send({ type: 'error', id, message: message(error) });
  }
});
