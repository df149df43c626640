// What one long memory costs the event loop outside the model and the database: the synchronous steps remember
// runs on the main thread for a 16,000-character text (the secret scan; reading the text's fact evidence, which
// the near-duplicate check does for the incoming text and for each candidate). Each is a block every other request
// waits behind, so it is measured alone, in this process, on synthetic text.
// Run: npx tsx bench/long-text-costs.ts [calls=40]
import { comparerOf } from '../src/memory/same-fact.js';
import { rejectSecrets } from '../src/memory/secrets.js';
import { summarise } from './lib/stats.js';
import { memoryText } from './lib/synthetic-embedder.js';

const calls = Number(process.argv[2] ?? 40);
const LONG_TEXT_CHARS = 16_000;
const SHORT_TEXT = 'The user plays the clarinet in a brass band on Tuesdays.';

const longText = (index: number) => {
  let text = '';
  for (let i = 0; text.length < LONG_TEXT_CHARS; i++) text += `${memoryText(index * 1_000 + i)}. `;
  return text.slice(0, LONG_TEXT_CHARS);
};
const texts = Array.from({ length: calls + 6 }, (_, index) => longText(index));

function measure(name: string, run: (index: number) => unknown): void {
  for (let i = 0; i < 5; i++) run(i);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    run(i + 5);
    times.push(performance.now() - started);
  }
  const { p50, p99 } = summarise(times, 1);
  console.log(`${name.padEnd(58)} p50 ${p50.toFixed(2).padStart(6)} ms  p99 ${p99.toFixed(2).padStart(6)} ms`);
}

console.log(`synchronous costs of a ${LONG_TEXT_CHARS}-character text, ${calls} calls each, node ${process.version}`);
measure('secret scan (rejectSecrets)', (index) => rejectSecrets({ text: texts[index]! }));
measure('incoming text read for comparison (comparerOf)', (index) => comparerOf(texts[index]!));
const incomingLong = comparerOf(texts[0]!);
measure('one long candidate compared with a long incoming text', (index) => incomingLong(texts[index + 1]!));
const incomingShort = comparerOf(SHORT_TEXT);
measure('one long candidate compared with a short incoming text', (index) => incomingShort(texts[index + 1]!));
