/**
 * One worker thread of the local provider: loads the model once (from the module named in workerData, normally
 * local-model.ts), then embeds one batch per message. The main thread validates and normalises the vectors.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LocalModel } from './local-model.js';

export interface WorkerRequest {
  readonly id: number;
  readonly texts: readonly string[];
}

export type WorkerReply =
  | { readonly type: 'ready' }
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

let model: LocalModel;
try {
  const { loadModel } = (await import((workerData as { modelModule: string }).modelModule)) as { loadModel: () => Promise<LocalModel> };
  model = await loadModel();
  send({ type: 'ready' });
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
