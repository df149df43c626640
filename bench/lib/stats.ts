/** Latency summary of a run: percentiles in milliseconds and throughput in operations per second. */
export interface Summary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly mean: number;
  readonly throughput: number;
}

/** The middle value (the upper one of an even count). */
export const median = (values: readonly number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

export function summarise(latenciesMs: readonly number[], wallMs: number): Summary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return {
    count: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length),
    throughput: (sorted.length / wallMs) * 1000,
  };
}

/** Runs `operation(i)` `total` times with `concurrency` workers; returns per-operation latencies and wall time. */
export async function runConcurrent(total: number, concurrency: number, operation: (index: number) => Promise<void>): Promise<Summary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < total; index = next++) {
        const t0 = performance.now();
        await operation(index);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return summarise(latencies, performance.now() - started);
}

export function formatRow(label: string, summary: Summary): string {
  const ms = (value: number) => value.toFixed(1).padStart(7);
  return `${label.padEnd(34)} n=${String(summary.count).padStart(5)}  p50 ${ms(summary.p50)} ms  p95 ${ms(summary.p95)} ms  p99 ${ms(summary.p99)} ms  ${summary.throughput.toFixed(1).padStart(7)} ops/s`;
}
