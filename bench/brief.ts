// The brief at the start of a conversation for a subject holding 100k memories, on PostgreSQL: its size (memories
// shown, characters of text, the wire answer of the `brief` tool and the text of the `brief` prompt, in bytes and
// approximate tokens at 4 characters each) and its cost (whole call, round trips, and the plan of the statement
// that picks the candidates). The seeded memories get importance spread over [0, 1), last_confirmed_at = created_at
// (up to 100k minutes back) and, for 5 % of them, 1–40 recalls, so each of the brief's three lists has a choice.
// Run: TEST_DATABASE_URL=… npx tsx bench/brief.ts [calls=200] [memories=100000]
// It seeds its own schema (BENCH_SEED_SCHEMA, default bench_seed_brief_<memories>): migration 0019 is not in every
// branch's migrator, so the shared seed schema is left alone. Drop the schema when done.
import pg from 'pg';
import { openDatabase } from '../src/db/open-database.js';
import { LOCAL_MODEL_DIMENSIONS } from '../src/embeddings/local-provider.js';
import { MemoryService } from '../src/memory/memory-service.js';
import { BRIEF_DEFAULT_CHARS, briefPrompt, briefTool } from '../src/tools/brief.js';
import { benchConfig } from './lib/bench-config.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { HEAVY_SUBJECT, seededDatabase } from './lib/seed.js';
import { summarise } from './lib/stats.js';
import { syntheticEmbedder } from './lib/synthetic-embedder.js';

const calls = Number(process.argv[2] ?? 200);
const memories = Number(process.argv[3] ?? 100_000);
if (BENCH_DATABASE_URL === undefined) throw new Error('set TEST_DATABASE_URL (PostgreSQL only)');
process.env.BENCH_SEED_SCHEMA ??= `bench_seed_brief_${memories}`;

/** Statements sent per call, counted as pg sees them. */
let statements = 0;
type QueryConfig = { text: string; values?: unknown[] } & Record<string, unknown>;
const clientQuery = pg.Client.prototype.query as (this: pg.Client, config: QueryConfig, ...rest: unknown[]) => Promise<pg.QueryResult>;
(pg.Client.prototype as unknown as { query: typeof clientQuery }).query = function (this: pg.Client, config: QueryConfig, ...rest: unknown[]) {
  statements += 1;
  return clientQuery.call(this, config, ...rest);
};

const seeded = await seededDatabase('postgres', memories);
const config = benchConfig(seeded.env.MEMORY_SERVICE_DATA_DIR!, seeded.env);
const schema = config.database.schema;

// The spread the brief ranks on, made once per seed (the marker: some memory has importance other than 0.5).
const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await admin.connect();
await admin.query(`set search_path to "${schema}", public`);
await admin.query(`select set_config('memory_service.all_subjects', 'on', false)`);
const spread = Number((await admin.query(`select count(*) as n from memories where importance <> 0.5`)).rows[0].n);
if (spread === 0) {
  process.stdout.write('spreading importance, confirmation dates and recall counts ... ');
  const t0 = performance.now();
  await admin.query(`update memories set importance = (id % 100) / 100.0, last_confirmed_at = created_at`);
  await admin.query(`
    insert into memory_recalls (memory_id, subject, recalls, last_recalled_at)
      select id, subject, 1 + (id * 7919) % 40, created_at from memories where id % 20 = 0
      on conflict (memory_id) do nothing`);
  await admin.query('vacuum analyze memories');
  await admin.query('analyze memory_recalls');
  console.log(`${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

const db = await openDatabase({ url: BENCH_DATABASE_URL, dataDir: config.database.dataDir, schema, embeddingDimensions: LOCAL_MODEL_DIMENSIONS, poolSize: 1 });
const service = new MemoryService({ db, embedder: syntheticEmbedder(), nearDuplicateThreshold: config.memory.nearDuplicateThreshold });
const tool = briefTool(service);
const prompt = briefPrompt(service);
const context = { subject: HEAVY_SUBJECT, scopes: ['memory:read'] };

// A baseline under the same conditions: the subject's counts, the same transaction and as many round trips but no
// candidates, so the brief's own cost is the difference (the machine may be loaded by other work).
for (let i = 0; i < 10; i++) await service.counts(HEAVY_SUBJECT);
const baseline: number[] = [];
let baselineStatements = 0;
for (let i = 0; i < calls; i++) {
  statements = 0;
  const t0 = performance.now();
  await service.counts(HEAVY_SUBJECT);
  baseline.push(performance.now() - t0);
  baselineStatements = statements;
}
const base = summarise(baseline, 1);
console.log(`baseline (counts, ${baselineStatements} statements): p50 ${base.p50.toFixed(2)} ms p95 ${base.p95.toFixed(2)} ms`);
console.log(`brief: ${calls} calls, one subject of ${memories} memories, PostgreSQL, schema ${schema}, node ${process.version}`);
try {
  for (const maxChars of [BRIEF_DEFAULT_CHARS, 10_000]) {
    for (let i = 0; i < 10; i++) await tool.call({ max_chars: maxChars }, context); // warm-up
    const wall: number[] = [];
    let perCall = 0;
    let answer = await tool.call({ max_chars: maxChars }, context);
    for (let i = 0; i < calls; i++) {
      statements = 0;
      const t0 = performance.now();
      answer = await tool.call({ max_chars: maxChars }, context);
      wall.push(performance.now() - t0);
      perCall = statements;
    }
    const s = summarise(wall, 1);
    const structured = answer.structuredContent as unknown as { shown: number; groups: { memories: { text: string }[] }[] };
    const textChars = structured.groups.flatMap((group) => group.memories).reduce((sum, memory) => sum + memory.text.length, 0);
    const wireBytes = Buffer.byteLength(answer.content[0].text);
    console.log(
      `\nmax_chars ${maxChars}: ${structured.shown} memories in ${structured.groups.length} tag groups, ${textChars} characters of text; ` +
        `tool answer (content text) ${wireBytes} bytes ≈ ${Math.round(wireBytes / 4)} tokens; ${perCall} statements per call; ` +
        `whole call p50 ${s.p50.toFixed(2)} ms p95 ${s.p95.toFixed(2)} ms`,
    );
  }
  const text = (await prompt.get(context)).messages[0]!.content.text;
  console.log(`\nprompt (default budget): ${Buffer.byteLength(text)} bytes ≈ ${Math.round(text.length / 4)} tokens\n${text.split('\n').slice(0, 8).join('\n')}\n…`);

  // The plan of the statement that picks the candidates, under row-level security as the service runs it.
  await admin.query('begin');
  await admin.query(`select set_config('memory_service.all_subjects', 'off', true), set_config('memory_service.subject', $1, true)`, [HEAVY_SUBJECT]);
  const plan = await admin.query(
    `explain (analyze, buffers, costs off)
     with picked as (
       (select id from memories where subject = $1 and (expires_at is null or expires_at > now()) order by last_confirmed_at desc, id desc limit 60)
       union
       (select id from memories where subject = $1 and (expires_at is null or expires_at > now()) order by importance desc, last_confirmed_at desc, id desc limit 60)
       union
       (select memory_id from memory_recalls where subject = $1 order by recalls desc, memory_id desc limit 60))
     select id, left(text, 300), (select recalls from memory_recalls where memory_recalls.memory_id = memories.id)
       from memories where subject = $1 and id in (select id from picked) and (expires_at is null or expires_at > now())`,
    [HEAVY_SUBJECT],
  );
  await admin.query('rollback');
  console.log(`\ncandidates, EXPLAIN (ANALYZE, BUFFERS):\n${plan.rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n')}`);
} finally {
  await db.close();
  await admin.end();
}
