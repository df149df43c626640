/**
 * A stand-in for src/embeddings/local-model.ts, loaded by the local provider's worker threads from its URL. The
 * query string picks the behaviour (`?mode=…`), so one file serves every case:
 * - ok (default): a vector derived from each text's characters; a text starting with SLOW keeps the worker busy
 *   for the milliseconds after it (`SLOW 400 …`), like a long text does the real model; the text CRASH ends the
 *   worker thread (exit code 3), like a fatal error in the model would;
 * - thread: like ok, but every vector says which thread embedded it: [tid, 1, 0, …] (tid from /proc/thread-self),
 *   so after normalisation vector[0] / vector[1] is the worker's thread id;
 * - throws, short, nan, zero, missing: the model fails, or returns bad vectors;
 * - fail-first-load: the first load (the marker file `marker` is absent) fails, later ones succeed.
 */
import { existsSync, readlinkSync, writeFileSync } from 'node:fs';

const params = new URL(import.meta.url).searchParams;
const mode = params.get('mode') ?? 'ok';

function vector(text: string): number[] {
  const out = new Array<number>(512).fill(0.01);
  for (let i = 0; i < text.length; i++) out[(text.charCodeAt(i) * 31 + i) % 512]! += 1;
  return out;
}

export async function loadModel(): Promise<{ embed(texts: string[]): Promise<number[][]> }> {
  if (mode === 'fail-first-load') {
    const marker = params.get('marker')!;
    if (!existsSync(marker)) {
      writeFileSync(marker, 'loaded once');
      throw new Error('weights missing');
    }
  }
  return {
    async embed(texts) {
      if (mode === 'throws') throw new Error('tensor exploded');
      if (texts.includes('CRASH')) process.exit(3);
      for (const text of texts) {
        const slow = /^SLOW (\d+)/.exec(text);
        if (slow !== null) {
          const until = Date.now() + Number(slow[1]);
          while (Date.now() < until) {
            // Busy, as the model is while it embeds.
          }
        }
      }
      if (mode === 'thread') {
        const thread = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
        return texts.map(() => [thread, 1, ...new Array<number>(510).fill(0)]);
      }
      if (mode === 'short') return texts.map(() => [1, 2, 3]);
      if (mode === 'nan') return texts.map(() => new Array<number>(512).fill(Number.NaN));
      if (mode === 'zero') return texts.map(() => new Array<number>(512).fill(0));
      if (mode === 'missing') return texts.slice(1).map(vector);
      return texts.map(vector);
    },
  };
}
