// Shared by the quality benchmarks (bench/quality.ts, bench/recall-quality.ts) and the quality test: a composed
// service driven through tools/call, as users drive it, and recall@k tallies printed as tables.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeService, type Service } from '../../src/compose.js';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { storedVector } from '../../src/db/pgvector.js';
import { DEFAULT_EXACT_SCAN_LIMIT, gatherFirstEvidence } from '../../src/db/memories/recall-plan.js';
import { contentWords } from '../../src/memory/query-analysis.js';
import { BENCH_DATABASE_URL, dropBenchSchema, type BenchEngine } from './bench-server.js';
import { benchConfig, benchToken } from './bench-config.js';

/** tools/call as `subject`; resolves to structuredContent, throws on a protocol or tool error. */
export type CallTool = (subject: string, name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

export interface QualityService {
  readonly service: Service;
  readonly call: CallTool;
  close(): Promise<void>;
}

const BASE_URL = 'http://127.0.0.1:8799';

/**
 * The composed service (HTTP app, token check, tools) with the local model, called through `app.inject`.
 * `dataDir` keeps a PGlite database between runs (the caller decides when it is still valid); without it a
 * temporary folder (PGlite) or a fresh schema (PostgreSQL) is used and removed on close.
 */
export async function openQualityService(engine: BenchEngine, dataDir?: string): Promise<QualityService> {
  const keep = dataDir !== undefined;
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'memory-quality-'));
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  const schema = `bench_quality_${Date.now().toString(36)}`;
  const config = benchConfig(dir, {
    MEMORY_SERVICE_BASE_URL: BASE_URL,
    ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : {}),
  });
  // BENCH_EXACT_SCAN_LIMIT=0 sends even these small subjects down the index path, to compare it with the exact one.
  const exactScanLimit = process.env.BENCH_EXACT_SCAN_LIMIT === undefined ? undefined : Number(process.env.BENCH_EXACT_SCAN_LIMIT);
  const service = await composeService(config, exactScanLimit === undefined ? {} : { exactScanLimit });
  const tokens = new Map<string, Promise<string>>();
  const tokenOf = (subject: string) => {
    let token = tokens.get(subject);
    if (token === undefined) {
      token = benchToken(service.stateFile!, config, subject, 24 * 3600);
      tokens.set(subject, token);
    }
    return token;
  };
  let id = 0;
  const call: CallTool = async (subject, name, args) => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { host: new URL(BASE_URL).host, 'content-type': 'application/json', authorization: `Bearer ${await tokenOf(subject)}` },
      payload: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
    });
    const body = response.json() as { result?: { isError?: boolean; structuredContent: Record<string, unknown> } };
    if (response.statusCode !== 200 || body.result === undefined || body.result.isError) {
      throw new Error(`${name} failed: HTTP ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
    return body.result.structuredContent;
  };
  return {
    service,
    call,
    async close() {
      await service.close();
      if (engine === 'postgres') await dropBenchSchema(schema);
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `work` over `items` with `concurrency` workers (concurrent embeddings are batched by the provider). */
export async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < items.length; index = next++) await work(items[index]!, index);
    }),
  );
}

/** |gold ∩ found| / |gold|, where `found` lists each result's keys (a result may carry several, e.g. dia_ids). */
export function recallAt(gold: readonly string[], found: readonly (readonly string[])[], k: number): number {
  const top = new Set(found.slice(0, k).flat());
  return gold.filter((key) => top.has(key)).length / gold.length;
}

/** Sums of recall@k per row (a ranking) and column (a category), averaged when printed. */
export class RecallTally {
  readonly #sums = new Map<string, number>();
  readonly #counts = new Map<string, number>();

  constructor(readonly ks: readonly number[]) {}

  add(row: string, columns: readonly string[], gold: readonly string[], found: readonly (readonly string[])[]): void {
    for (const column of columns) {
      const key = `${row}|${column}`;
      this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
      for (const k of this.ks) this.#sums.set(`${key}|${k}`, (this.#sums.get(`${key}|${k}`) ?? 0) + recallAt(gold, found, k));
    }
  }

  /** Mean recall@k of one cell (NaN when empty). */
  mean(row: string, column: string, k: number): number {
    return (this.#sums.get(`${row}|${column}|${k}`) ?? 0) / (this.#counts.get(`${row}|${column}`) ?? 0);
  }

  count(row: string, column: string): number {
    return this.#counts.get(`${row}|${column}`) ?? 0;
  }

  /** A markdown table: one line per row, one cell per column, each cell "R@k1 / R@k2 / …". */
  table(rows: readonly string[], columns: readonly { key: string; label: string }[], firstHeader = 'ranking'): string {
    const lines = [
      `| ${firstHeader} | ${columns.map((column) => `${column.label} (${this.count(rows[0]!, column.key)})`).join(' | ')} |`,
      `|---|${columns.map(() => '---').join('|')}|`,
    ];
    for (const row of rows) {
      lines.push(`| ${row} | ${columns.map((column) => this.ks.map((k) => this.mean(row, column.key, k).toFixed(3)).join(' / ')).join(' | ')} |`);
    }
    return lines.join('\n');
  }
}

/** The two retrievers recall fuses, each measured alone by the benchmarks. */
export type Retriever = 'vector' | 'text';

/**
 * Benchmark-only: the ids one retriever alone ranks first for `query`, as recall runs it (through recall's planner,
 * gatherFirstEvidence: its depth, its index walk's width, passages for the vectors, the question's content words
 * for the full text), before fusion: no restatements, no confidence weighting. Not part of the service's surface.
 */
export async function componentRanking(service: Service, subject: string, query: string, retriever: Retriever, limit: number): Promise<number[]> {
  const [embedding] = await service.embedder.embed([query]);
  return service.db.withSubject(subject, 'benchmarking', async (trx) => {
    const question = { vector: storedVector(embedding!, service.embedder.model), filters: NO_FILTERS, words: contentWords(query), alternatives: [], meaningWords: [], personWords: [], personSearched: [], firstTexts: { count: () => 0, chars: 0 } };
    const evidence = await gatherFirstEvidence(trx, subject, question, { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT });
    return (retriever === 'vector' ? evidence.nearest : evidence.worded.map((hit) => hit.id)).slice(0, limit);
  });
}
