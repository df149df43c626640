import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PlainCounter, PlainHistogram, type CounterSeries, type HistogramSeries } from './plain-metrics.js';

/**
 * The service's metrics (Prometheus, prom-client): HTTP, JSON-RPC and tool calls, the embedding provider, the
 * database pool and the process. Each layer reports through a narrow method or observer; the HTTP routes that
 * serve them are in src/http/metrics.ts.
 */
/** Seconds; from a cached ping (~0.1 ms) to a slow embedding call. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Label values are kept to known sets, so a client cannot grow the series without bound. */
const METHODS = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);
const OTHER = 'other';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Everything the service reports to Prometheus, in one registry per service instance. */
export class ServiceMetrics {
  readonly registry = new Registry();
  #poolStats: (() => PoolStats) | undefined;

  // The series every request or tool call updates are plain numbers (see plain-metrics.ts); the rest is prom-client's.
  readonly #http = this.#timed(
    ['memory_service_http_requests_total', 'HTTP requests by route and status code.'],
    ['memory_service_http_request_duration_seconds', 'HTTP request latency by route, from the first byte received to the last byte sent.'],
  );
  readonly #rpc = this.#timed(
    ['memory_service_jsonrpc_requests_total', 'JSON-RPC requests by method and outcome (ok, or error for a JSON-RPC error response).'],
    ['memory_service_jsonrpc_request_duration_seconds', 'JSON-RPC request latency by method, after authentication and body parsing.'],
  );
  readonly #tool = this.#timed(
    ['memory_service_tool_calls_total', 'Tool calls by tool and outcome: ok, a tool error code (INVALID_INPUT, EMBEDDING_ERROR, ...) or internal_error.'],
    ['memory_service_tool_call_duration_seconds', 'Tool call latency by tool, including embedding and database work.'],
  );
  readonly #embeddingDuration = new Histogram({
    name: 'memory_service_embedding_duration_seconds',
    help: 'Latency of one call to the embedding provider (one or more texts).',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #embeddingFailures = new Counter({
    name: 'memory_service_embedding_failures_total',
    help: 'Calls to the embedding provider that failed.',
    registers: [this.registry],
  });
  readonly #embeddedTexts = new Counter({
    name: 'memory_service_embedding_texts_total',
    help: 'Texts sent to the embedding provider.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const stats = () => this.#poolStats?.() ?? { total: 0, idle: 0, waiting: 0 };
    new Gauge({
      name: 'memory_service_db_pool_connections',
      help: 'Database connections: total open, idle, and callers waiting for one (PGlite: one connection).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { total, idle, waiting } = stats();
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'in_use' }, Math.max(0, total - idle));
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }

  watchPool(poolStats: () => PoolStats): void {
    this.#poolStats = poolStats;
  }

  /** A count and a latency histogram, each as [name, help]. */
  #timed(count: [string, string], duration: [string, string]): { count: PlainCounter; duration: PlainHistogram } {
    return { count: new PlainCounter(...count, this.registry), duration: new PlainHistogram(...duration, LATENCY_BUCKETS, this.registry) };
  }

  /** Each label set's series, found by one string key (cheaper than the label object's own key). */
  readonly #bound = new Map<string, { count: CounterSeries; duration: HistogramSeries }>();

  #series(key: string, bind: () => { count: CounterSeries; duration: HistogramSeries }): { count: CounterSeries; duration: HistogramSeries } {
    let series = this.#bound.get(key);
    if (series === undefined) {
      series = bind();
      this.#bound.set(key, series);
    }
    return series;
  }

  observeHttp(route: string, status: number, seconds: number): void {
    const series = this.#series(`http ${route} ${status}`, () => ({
      count: this.#http.count.series({ route, status: String(status) }),
      duration: this.#http.duration.series({ route }),
    }));
    series.count.inc();
    series.duration.observe(seconds);
  }

  observeEmbedding(texts: number, seconds: number, ok: boolean): void {
    this.#embeddedTexts.inc(texts);
    this.#embeddingDuration.observe({ outcome: ok ? 'ok' : 'error' }, seconds);
    if (!ok) this.#embeddingFailures.inc();
  }

  /** The JSON-RPC dispatcher's observer (src/mcp/dispatcher.ts): per-method and per-tool counts and latencies. */
  get dispatchObserver() {
    return {
      onRequest: (method: string, outcome: 'ok' | 'error', seconds: number) => {
        const label = METHODS.has(method) ? method : OTHER;
        const series = this.#series(`rpc ${label} ${outcome}`, () => ({
          count: this.#rpc.count.series({ method: label, outcome }),
          duration: this.#rpc.duration.series({ method: label }),
        }));
        series.count.inc();
        series.duration.observe(seconds);
      },
      // Only registered tools reach here, so tool names are a known set.
      onToolCall: (tool: string, outcome: string, seconds: number) => {
        const series = this.#series(`tool ${tool} ${outcome}`, () => ({
          count: this.#tool.count.series({ tool, outcome: /^[a-z_]{1,40}$/i.test(outcome) ? outcome : OTHER }),
          duration: this.#tool.duration.series({ tool }),
        }));
        series.count.inc();
        series.duration.observe(seconds);
      },
    };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
