import type { Metric, Registry } from 'prom-client';

/**
 * A counter and a histogram for the per-request path, kept in plain numbers and read by prom-client's registry at
 * scrape time. prom-client validates and hashes the label set on every `inc` and `observe`, a bound label set
 * included; /mcp updates four series a request, and that was ~5 µs of a ~45 µs request (issue 17). Here a label
 * set is bound once to a series object, and an update is arithmetic on it.
 *
 * The registry reads any object with prom-client's metric shape (`name`, `help`, `type`, `aggregator`, `get()`);
 * test/unit/plain-metrics.test.ts checks that the text is byte for byte what prom-client's own Counter and
 * Histogram give for the same updates.
 */
type Labels = Readonly<Record<string, string>>;

interface MetricValue {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName?: string;
}

abstract class PlainMetric<S> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  readonly #series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry reads only the fields above and get(); its type names prom-client's own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series for these labels, made on first use; keep it and update it directly. */
  series(labels: Labels): S {
    const key = Object.values(labels).join('\u0000');
    let series = this.#series.get(key);
    if (series === undefined) {
      series = this.create(labels);
      this.#series.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(series: S): MetricValue[];

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.#series.values()].flatMap((s) => this.values(s)) };
  }
}

export class CounterSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  inc(): void {
    this.value++;
  }
}

export class PlainCounter extends PlainMetric<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected values(series: CounterSeries): MetricValue[] {
    return [{ labels: series.labels, value: series.value }];
  }
}

export class HistogramSeries {
  /** Observations per bound, not cumulative; those above every bound are only in `count` (the +Inf bucket). */
  readonly #counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    readonly bounds: readonly number[],
  ) {
    this.#counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    if (bucket < bounds.length) this.#counts[bucket]!++;
    this.sum += value;
    this.count++;
  }

  /** Cumulative counts per bound, as Prometheus's `le` buckets are. */
  cumulative(): number[] {
    let total = 0;
    return this.bounds.map((_bound, i) => (total += this.#counts[i]!));
  }
}

export class PlainHistogram extends PlainMetric<HistogramSeries> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(name: string, help: string, bounds: readonly number[], registry: Registry) {
    super(name, help, registry);
    this.#bounds = [...bounds].sort((a, b) => a - b);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.#bounds);
  }

  protected values(series: HistogramSeries): MetricValue[] {
    const buckets = series.cumulative().map((value, i) => ({ labels: { le: series.bounds[i]!, ...series.labels }, value, metricName: `${this.name}_bucket` }));
    return [
      ...buckets,
      { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${this.name}_bucket` },
      { labels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
      { labels: series.labels, value: series.count, metricName: `${this.name}_count` },
    ];
  }
}
