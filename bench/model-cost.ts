// What the local model alone costs per LoCoMo turn, on one thread, and where inside it the time goes: the ceiling
// the model puts on remember's throughput (each core can embed at most 1000 / ms-per-turn turns a second, with
// nothing else running). The turns are embedded as remember embeds them (embedMemoryTexts: a text of several
// passages by its passages only), `turnsPerCall` turns a model call, as the provider batches concurrent requests.
// The kernel table is TensorFlow.js's own profile of one call of 8 passages.
// Run: npx tsx bench/model-cost.ts [turns=400]
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME, loadModel } from '../src/embeddings/local-model.js';
import type { EmbeddingProvider } from '../src/embeddings/provider.js';
import { embedMemoryTexts, passagesOf } from '../src/memory/passages.js';
import { LOCOMO_DATA, sessionsOf, turnText } from './lib/locomo.js';

const turnCount = Number(process.argv[2] ?? 400);
const samples = JSON.parse(readFileSync(LOCOMO_DATA, 'utf8')) as { conversation: Record<string, unknown> }[];
const turns = samples.flatMap((sample) => sessionsOf(sample.conversation).flatMap(({ turns }) => turns.map(turnText))).slice(0, turnCount);

const model = await loadModel();
let texts = 0;
/** The model as the memory domain sees a provider, on this thread. */
const provider: EmbeddingProvider = {
  model: LOCAL_MODEL_NAME,
  dimensions: LOCAL_MODEL_DIMENSIONS,
  embed: async (batch) => {
    texts += batch.length;
    return model.embed([...batch]);
  },
  ready: async () => {},
  close: async () => {},
};
await embedMemoryTexts(provider, turns.slice(0, 8)); // warm-up

const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
console.log(`model cost: ${turns.length} LoCoMo turns, ${LOCAL_MODEL_NAME}, one thread, node ${process.version}, ${availableParallelism()} cores`);
const rows: string[] = [];
for (const turnsPerCall of [1, 4, 16]) {
  let best = Infinity;
  let textsPerTurn = 0;
  for (let round = 0; round < 2; round++) {
    texts = 0;
    const before = cpuMs();
    for (let start = 0; start < turns.length; start += turnsPerCall) await embedMemoryTexts(provider, turns.slice(start, start + turnsPerCall));
    best = Math.min(best, (cpuMs() - before) / turns.length);
    textsPerTurn = texts / turns.length;
  }
  rows.push(`| ${turnsPerCall} | ${textsPerTurn.toFixed(2)} | ${best.toFixed(1)} | ${(1000 / best).toFixed(1)} | ${((1000 / best) * availableParallelism()).toFixed(1)} |`);
}
console.log('\n| turns a call | texts a turn | CPU ms a turn (best of 2) | turns/s, one core | turns/s, every core (model only) |\n|---|---|---|---|---|');
console.log(rows.join('\n'));

// TensorFlow.js's kernel profile of one call: 8 passages of 60-90 characters.
const core = (await import('@energetic-ai/core')) as unknown as {
  profile(run: () => Promise<unknown>): Promise<{ kernels: { name: string; kernelTimeMs: number; inputShapes: number[][] }[] }>;
};
const passages = turns.flatMap(passagesOf).filter((text) => text.length >= 60 && text.length <= 90).slice(0, 8);
await model.embed(passages);
const { kernels } = await core.profile(() => model.embed(passages));
const byKernel = new Map<string, { ms: number; calls: number }>();
for (const kernel of kernels) {
  const entry = byKernel.get(kernel.name) ?? { ms: 0, calls: 0 };
  entry.ms += kernel.kernelTimeMs;
  entry.calls += 1;
  byKernel.set(kernel.name, entry);
}
const total = [...byKernel.values()].reduce((sum, entry) => sum + entry.ms, 0);
console.log(`\nkernels of one call (${passages.length} passages): ${total.toFixed(1)} ms in ${kernels.length} kernel calls\n\n| kernel | calls | ms | share |\n|---|---|---|---|`);
for (const [name, { ms, calls }] of [...byKernel].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6)) {
  console.log(`| ${name} | ${calls} | ${ms.toFixed(1)} | ${((100 * ms) / total).toFixed(0)} % |`);
}
const largest = kernels.filter((kernel) => kernel.name === 'BatchMatMul').sort((a, b) => b.kernelTimeMs - a.kernelTimeMs)[0];
if (largest !== undefined) {
  const [[rows_, inner], [, cols]] = largest.inputShapes as [[number, number], [number, number]];
  const gflops = (2 * rows_ * inner * cols) / (largest.kernelTimeMs * 1e6);
  console.log(`\nlargest matrix product: ${JSON.stringify(largest.inputShapes)} in ${largest.kernelTimeMs.toFixed(1)} ms (${gflops.toFixed(1)} GFLOP/s)`);
}
model.dispose?.();
