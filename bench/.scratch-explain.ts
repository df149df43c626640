import { sql } from 'kysely';
import { openDatabase } from '../src/db/open-database.js';
import { LOCAL_MODEL_NAME } from '../src/embeddings/local-provider.js';
import { configureIterativeScan, hnswQuery, vectorConditions } from '../src/memory/recall-repository.js';
import { toVectorLiteral } from '../src/memory/vector.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { seedSubjects } from './lib/seed-subjects.js';
import { syntheticVector } from './lib/synthetic-embedder.js';
const engine = (process.argv[2] ?? 'postgres') as 'postgres' | 'pglite';
const seeded = await seedSubjects(engine, [
  { subject: 'mid', count: 5000, topic: (i) => i % 50 },
  { subject: 'big', count: 30_000, topic: (i) => i % 50, tags: (i) => [...(i % 2 === 0 ? ['common'] : []), ...(i % 100 === 0 ? ['rare'] : [])] },
  ...Array.from({ length: 325 }, (_, i) => ({ subject: `user-${i}`, count: 200, topic: (j: number) => (i + j) % 50 })),
]);
console.log('seeded', seeded.insertSeconds, seeded.indexSeconds);
const db = await openDatabase({ url: engine === 'postgres' ? BENCH_DATABASE_URL : undefined, dataDir: 'memory://', schema: seeded.schema, embeddingDimensions: 512, migrate: false, pglite: seeded.pglite });
const f = { tags: [] as string[], tagMatch: 'any' as const, sessionId: undefined, captureMode: undefined, sourceProvider: undefined, createdAfter: undefined, createdBefore: undefined };
const vector = { literal: toVectorLiteral(syntheticVector('query about topic 3 number 3')), model: LOCAL_MODEL_NAME, dimensions: 512 };
const show = (rows: unknown[]) => console.log((rows as Record<string, string>[]).map((row) => Object.values(row)[0]).filter((l) => !l.includes('Sort Key') && !l.includes('Index Cond: ((embedding')).map((l) => l.replace(/'\[[^\]]*\]'/g, "'[…]'")).join('\n'));
for (const [name, subject, filters] of [['big', 'big', f], ['big rare', 'big', { ...f, tags: ['rare'] }], ['mid', 'mid', f]] as const) {
  const where = vectorConditions(subject, filters, vector);
  console.log(`\n=== ${name}: count`);
  show((await db.withSubject(subject, (trx) => sql`explain analyze select count(*) from (select 1 from memories where ${where} limit 10001) c`.execute(trx))).rows);
  console.log(`=== ${name}: exact`);
  show((await db.withSubject(subject, (trx) => sql`explain analyze select id from memories where ${where} order by embedding <=> ${vector.literal}::vector, id desc limit 100`.execute(trx))).rows);
  console.log(`=== ${name}: hnsw`);
  show((await db.withSubject(subject, async (trx) => {
    await configureIterativeScan(trx, 100);
    const q = hnswQuery(where, vector, 100).compile(trx);
    return trx.executeQuery({ ...q, sql: `explain analyze ${q.sql}` });
  })).rows);
}
await db.close();
await seeded.close();
