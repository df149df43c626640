// What the remember benchmarks remember: one-sentence facts by default, or with BENCH_TEXTS=locomo LoCoMo's
// conversation turns ("<speaker>: <text>", most of several sentences, so each is also embedded sentence by
// sentence: src/memory/passages.ts), as the 19 a second was measured.
import { locomoTurns } from './locomo.js';

const topics = ['hiking', 'cooking', 'chess', 'jazz', 'gardening', 'sailing', 'pottery', 'astronomy', 'cycling', 'baking'];

export interface RememberTexts {
  readonly description: string;
  /** The index-th text of a run; runs with different names get different facts. */
  textFor(run: string, index: number): string;
}

export function rememberTexts(kind = process.env.BENCH_TEXTS ?? 'facts'): RememberTexts {
  if (kind === 'locomo') {
    const turns = locomoTurns();
    return { description: `LoCoMo's ${turns.length} turns`, textFor: (_run, index) => turns[index % turns.length]! };
  }
  if (kind !== 'facts') throw new Error(`BENCH_TEXTS is facts or locomo, not ${kind}`);
  return {
    description: 'one-sentence facts',
    textFor: (run, index) => `In ${run} note ${index}, the user said they spent ${index % 7} hours on ${topics[index % topics.length]} with friend number ${index}`,
  };
}
