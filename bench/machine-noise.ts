// The machine's own tail: the same fixed piece of CPU work (no I/O, no allocation, nothing shared) run at the
// fairness benchmark's pace, in this process alone. Its p99 against its p50 is what this machine adds to any
// request's tail by itself, whatever the service does: read the fairness benchmark's p99 against it.
// Run: npx tsx bench/machine-noise.ts [seconds=30] [taskMs=35] [perSecond=5]
import { summarise } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 30);
const taskMs = Number(process.argv[3] ?? 35);
const perSecond = Number(process.argv[4] ?? 5);

/** Integer work the JIT cannot skip (its result is used). */
function spin(iterations: number): number {
  let x = 0;
  for (let i = 0; i < iterations; i++) x = (x * 31 + i) | 0;
  return x;
}

// Calibrated on the quickest of several runs, so the task is about taskMs at the machine's best.
let sink = 0;
let quickest = Infinity;
const probe = 2_000_000;
for (let i = 0; i < 20; i++) {
  const started = performance.now();
  sink ^= spin(probe);
  quickest = Math.min(quickest, performance.now() - started);
}
const iterations = Math.round((probe * taskMs) / quickest);

const times: number[] = [];
const started = performance.now();
for (let index = 0; performance.now() - started < seconds * 1000; index++) {
  const wait = started + (index * 1000) / perSecond - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const begun = performance.now();
  sink ^= spin(iterations);
  times.push(performance.now() - begun);
}
const { p50, p99 } = summarise(times, 1);
console.log(
  `machine noise: a fixed CPU task of ~${taskMs} ms at its quickest, ${perSecond}/s for ${seconds} s (${times.length} runs), node ${process.version}: ` +
    `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms, p99/p50 ${(p99 / p50).toFixed(2)} (checksum ${sink})`,
);
