import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase } from '../../src/db/open-database.js';
import { openPGlite } from '../../src/db/pglite-open.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../../src/embeddings/local-provider.js';
import { createVectorIndexStatement, toVectorLiteral, vectorIndexName } from '../../src/db/pgvector.js';
import { BENCH_DATABASE_URL, type BenchEngine } from './bench-server.js';
import { memoryText, syntheticVector } from './synthetic-embedder.js';

/** One group of synthetic memories: `count` rows of `subject`, the i-th with `tags(i)` and about `topic(i)`. */
export interface SeedGroup {
  readonly subject: string;
  readonly count: number;
  readonly tags?: (index: number) => string[];
  readonly topic?: (index: number) => number;
}

export interface SeededSubjects {
  readonly engine: BenchEngine;
  readonly schema: string;
  /** The PGlite holding the data (PGlite only); pass it to composeService. */
  readonly pglite: PGlite | undefined;
  /** Seconds spent inserting rows and building the HNSW index. */
  readonly insertSeconds: number;
  readonly indexSeconds: number;
  /** Raw SQL as the owner with every subject visible (maintenance). */
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

const BATCH = 1000;

/**
 * A fresh database (in-memory PGlite, or a new PostgreSQL schema) migrated by the service, holding synthetic
 * memories with synthetic vectors (see synthetic-embedder.ts). Rows are bulk-inserted without the HNSW index,
 * which is then built in one go, with the service's own definition (src/db/pgvector.ts).
 */
export async function seedSubjects(
  engine: BenchEngine,
  groups: readonly SeedGroup[],
  vectorOf: (text: string) => number[] = syntheticVector,
): Promise<SeededSubjects> {
  const schema = engine === 'postgres' ? `bench_recall_${Date.now().toString(36)}` : 'public';
  const pglite = engine === 'pglite' ? await openPGlite('memory://') : undefined;
  const handle = await openDatabase({ url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined, dataDir: 'memory://', schema, embeddingDimensions: LOCAL_MODEL_DIMENSIONS, pglite });
  await handle.close();

  let query: SeededSubjects['query'];
  let closeRaw: () => Promise<void>;
  if (pglite !== undefined) {
    await pglite.exec(`set search_path to "${schema}", public`);
    query = async <R>(text: string, params?: unknown[]) => (await pglite.query<R>(text, params)).rows;
    closeRaw = () => pglite.close();
  } else {
    const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
    await client.connect();
    await client.query(`set search_path to "${schema}", public`);
    // The owner is subject to row-level security too (FORCE); all_subjects = on admits every subject's rows.
    await client.query(`select set_config('memory_service.all_subjects', 'on', false)`);
    query = async <R>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as R[];
    closeRaw = async () => {
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    };
  }

  const started = performance.now();
  await query(`drop index if exists ${vectorIndexName(LOCAL_MODEL_DIMENSIONS)}`);
  let serial = 0;
  const rows = groups.flatMap((group) => Array.from({ length: group.count }, (_, index) => ({ group, index })));
  // Interleave the groups, so every subject's rows are spread over the table as in real use.
  rows.sort((a, b) => a.index / a.group.count - b.index / b.group.count);
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH).map(({ group, index }) => {
      const text = memoryText(serial++, group.topic?.(index));
      return { subject: group.subject, text, tags: group.tags?.(index) ?? [], vector: toVectorLiteral(vectorOf(text)) };
    });
    await query(
      `insert into memories (subject, text, tags, embedding, embedding_model, embedding_dimensions, created_at)
       select t.subject, t.text, string_to_array(t.tags, ',')::text[], t.embedding::vector, $1, $2, now() - (t.age || ' minutes')::interval
         from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[]) as t(subject, text, tags, embedding, age)`,
      [
        LOCAL_MODEL_NAME,
        LOCAL_MODEL_DIMENSIONS,
        batch.map((row) => row.subject),
        batch.map((row) => row.text),
        batch.map((row) => row.tags.join(',')),
        batch.map((row) => row.vector),
        batch.map((_, i) => rows.length - start - i),
      ],
    );
  }
  const inserted = performance.now();
  await query(`set maintenance_work_mem = '1GB'`).catch(() => undefined);
  await query(createVectorIndexStatement(LOCAL_MODEL_DIMENSIONS));
  await query('vacuum analyze memories');
  const indexed = performance.now();
  return {
    engine,
    schema,
    pglite,
    insertSeconds: (inserted - started) / 1000,
    indexSeconds: (indexed - inserted) / 1000,
    query,
    close: closeRaw,
  };
}
