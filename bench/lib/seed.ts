import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../../src/db/open-database.js';
import { openPGlite } from '../../src/db/pglite-open.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../../src/embeddings/local-provider.js';
import { createVectorIndexStatement, toVectorLiteral, vectorIndexName } from '../../src/db/pgvector.js';
import { BENCH_DATABASE_URL, type BenchEngine } from './bench-server.js';
import { memoryText, syntheticVector } from './synthetic-embedder.js';

/** The subject that owns the seeded memories; recall benchmarks search it. */
export const HEAVY_SUBJECT = 'bench-heavy';
const SEED_PROVIDER = 'bench-seed';
const BATCH = 1000;
const SEED_VERSION = 2;

export interface SeededDatabase {
  /** MEMORY_SERVICE_* variables that open it. */
  readonly env: Record<string, string>;
  readonly count: number;
}

interface Sql {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  close(): Promise<void>;
}

/**
 * A database holding `count` synthetic memories of HEAVY_SUBJECT, made once and reused (PGlite under
 * bench/.data, PostgreSQL in its own schema). Rows a benchmark added are removed, so every run starts
 * from the same data. Rows are bulk-inserted without the HNSW index, which is then built in one go:
 * inserting into it row by row would take far longer.
 */
export async function seededDatabase(engine: BenchEngine, count: number): Promise<SeededDatabase> {
  // The version changes whenever the synthetic texts or vectors do, so an old seed is never measured.
  const dataDir = fileURLToPath(new URL(`../.data/seed-${SEED_VERSION}-${count}`, import.meta.url));
  // BENCH_SEED_SCHEMA: a schema of one's own on a PostgreSQL shared with others (drop it when done).
  const schema = process.env.BENCH_SEED_SCHEMA ?? `bench_seed_${SEED_VERSION}_${count}`;
  mkdirSync(dataDir, { recursive: true });
  // The seeded subject holds the default quota's 100k already: the benchmarks then remember more into it.
  const unlimited = { MEMORY_SERVICE_MAX_MEMORIES_PER_SUBJECT: '0' };
  const env: Record<string, string> =
    engine === 'postgres'
      ? { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema, MEMORY_SERVICE_DATA_DIR: dataDir, ...unlimited }
      : { MEMORY_SERVICE_DATA_DIR: dataDir, MEMORY_SERVICE_DATABASE_SCHEMA: 'public', ...unlimited };

  // Migrations (and the current schema) the way the service makes them.
  const handle = await openDatabase({
    url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined,
    dataDir: join(dataDir, 'pglite'),
    schema: engine === 'postgres' ? schema : 'public',
    embeddingDimensions: LOCAL_MODEL_DIMENSIONS,
  });
  await handle.close();

  const db = await connect(engine, dataDir, engine === 'postgres' ? schema : 'public');
  try {
    await db.query(`delete from memories where source_provider is distinct from '${SEED_PROVIDER}'`);
    await db.query('delete from tombstones');
    await db.query('delete from memory_restatements');
    const have = Number((await db.query(`select count(*) as n from memories`)).rows[0]!.n);
    if (have !== count) {
      const started = performance.now();
      process.stdout.write(`seeding ${count} memories on ${engine} ... `);
      await db.query('delete from memories');
      await db.query(`drop index if exists ${vectorIndexName(LOCAL_MODEL_DIMENSIONS)}`);
      for (let start = 0; start < count; start += BATCH) {
        const texts = Array.from({ length: Math.min(BATCH, count - start) }, (_, i) => memoryText(start + i));
        await db.query(
          `insert into memories (subject, text, tags, source_provider, embedding, embedding_model, embedding_dimensions, created_at)
           select $1, t.text, array[$2::text], $3, t.embedding::vector, $4, $5, now() - (t.age || ' minutes')::interval
             from unnest($6::text[], $7::text[], $8::int[]) as t(text, embedding, age)`,
          [
            HEAVY_SUBJECT,
            `batch-${(start / BATCH) % 50}`,
            SEED_PROVIDER,
            LOCAL_MODEL_NAME,
            LOCAL_MODEL_DIMENSIONS,
            texts,
            texts.map((text) => toVectorLiteral(syntheticVector(text))),
            texts.map((_, i) => count - start - i),
          ],
        );
      }
      process.stdout.write(`inserted in ${((performance.now() - started) / 1000).toFixed(0)} s; building the HNSW index ... `);
      const indexed = performance.now();
      await db.query(`set maintenance_work_mem = '1GB'`).catch(() => undefined);
      // The service's own definition (src/db/pgvector.ts), so it finds the index in place.
      await db.query(createVectorIndexStatement(LOCAL_MODEL_DIMENSIONS));
      await db.query('analyze memories');
      console.log(`${((performance.now() - indexed) / 1000).toFixed(0)} s`);
    }
  } finally {
    await db.close();
  }
  return { env, count };
}

async function connect(engine: BenchEngine, dataDir: string, schema: string): Promise<Sql> {
  if (engine === 'postgres') {
    const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
    await client.connect();
    await client.query(`set search_path to "${schema}", public`);
    // Row-level security admits every subject's rows when all_subjects is on (maintenance).
    await client.query(`select set_config('memory_service.all_subjects', 'on', false)`);
    return { query: (text, params) => client.query(text, params), close: () => client.end() };
  }
  const pglite = await openPGlite(join(dataDir, 'pglite'));
  await pglite.exec(`set search_path to "${schema}", public`);
  await pglite.query(`select set_config('memory_service.all_subjects', 'on', false)`);
  return {
    query: async (text, params) => ({ rows: (await pglite.query<Record<string, unknown>>(text, params)).rows }),
    close: () => pglite.close(),
  };
}
