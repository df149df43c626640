// Recall in spaces (issue 41) on PostgreSQL at 100k memories: in a shared space against a personal space of the
// same size (target: ratio ~1), and over three spaces at once against one (target: at most 1.5x). The service
// runs in its own process (bench/lib/server-process.ts, from the build) with synthetic query vectors, so the
// figures are the database and ranking work of recall through HTTP; this process only sends requests. The cases
// take turns in short rounds, so a change in the shared machine's load falls on all of them alike.
// Run: TEST_DATABASE_URL=postgres://… npx tsx bench/spaces.ts [seconds per case and round=5] [rounds=4] [memories=100000]
import { sql } from 'kysely';
import { openDatabase } from '../src/db/open-database.js';
import { NO_FILTERS } from '../src/db/memories/filters.js';
import { sizeForVectorRanking, vectorConditions, vectorRanking } from '../src/db/memories/vector-ranking.js';
import { storedVector, vectorParameter } from '../src/db/pgvector.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../src/embeddings/local-provider.js';
import { DEFAULT_EXACT_SCAN_LIMIT } from '../src/db/memories/recall-plan.js';
import { callTool, runFor } from './lib/rpc-client.js';
import { BENCH_DATABASE_URL } from './lib/bench-server.js';
import { seedSubjects } from './lib/seed-subjects.js';
import { startServerChild } from './lib/server-child.js';
import { summarise } from './lib/stats.js';
import { queryText, syntheticVector } from './lib/synthetic-embedder.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 4);
const TOTAL = Number(process.argv[4] ?? 100_000);
const FILLER_PER_SUBJECT = 200;
if (BENCH_DATABASE_URL === undefined) throw new Error('set BENCH_DATABASE_URL or TEST_DATABASE_URL: this benchmark measures PostgreSQL');

/**
 * Two readers of different space sizes: each has a personal space of `size` memories, is a writer in a space of
 * the same size owned by someone else, and reaches two more of that size (one of their own, one as reader).
 */
const people = [
  { subject: 'reader-1k', size: 1000 },
  { subject: 'reader-2k', size: 2000 },
];
const spaceKey = (person: number, letter: string) => `space:bench${person}${letter}`.padEnd(30, '0');
const groups = people.flatMap((person, p) => [
  { subject: person.subject, count: person.size },
  ...['a', 'b', 'c'].map((letter) => ({ subject: spaceKey(p, letter), count: person.size })),
]);
const seededRows = groups.reduce((sum, group) => sum + group.count, 0);
const fillers = Math.ceil((TOTAL - seededRows) / FILLER_PER_SUBJECT);
for (let i = 0; i < fillers; i++) groups.push({ subject: `user-${i}`, count: Math.min(FILLER_PER_SUBJECT, TOTAL - seededRows - i * FILLER_PER_SUBJECT) });

const seeded = await seedSubjects('postgres', groups);
console.log(
  `spaces benchmark: PostgreSQL, ${TOTAL} memories (${fillers} other subjects of ${FILLER_PER_SUBJECT}), seeded in ${seeded.insertSeconds.toFixed(0)} s, ` +
    `HNSW built in ${seeded.indexSeconds.toFixed(0)} s; ${rounds} rounds of ${seconds} s per case, limit 10, node ${process.version}`,
);
try {
  await shareSpaces();
  await measure();
  await vectorPlans();
} finally {
  await seeded.close();
}

/** Each person's three spaces: a writer in one of someone else's, the owner of one, a reader in a third. */
async function shareSpaces(): Promise<void> {
  for (const [p, person] of people.entries()) {
    await seeded.query(`insert into spaces (id, name, owner) values ($1, 'Shared ' || $5, 'owner-elsewhere'), ($2, 'Mine', $3), ($4, 'Read only ' || $5, 'owner-elsewhere')`, [
      spaceKey(p, 'a'),
      spaceKey(p, 'b'),
      person.subject,
      spaceKey(p, 'c'),
      String(p),
    ]);
    await seeded.query(`insert into space_members (space_id, member, role) values ($1, $3, 'writer'), ($2, $3, 'reader')`, [spaceKey(p, 'a'), spaceKey(p, 'c'), person.subject]);
  }
  await seeded.query('analyze spaces');
  await seeded.query('analyze space_members');
}

async function measure(): Promise<void> {
  const server = await startServerChild({
    embedder: 'synthetic',
    env: { MEMORY_SERVICE_DATABASE_URL: BENCH_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: seeded.schema },
  });
  try {
    const cases = await Promise.all(
      people.flatMap((person, p) => {
        const token = server.token(person.subject);
        const make = (name: string, space: string | string[]) => token.then((bearer) => ({ person, name, space, bearer, latencies: [] as number[], wallMs: 0, spacesSeen: new Set<string>() }));
        return [
          make('personal', 'personal'),
          make('shared (writer)', spaceKey(p, 'a')),
          make('three spaces', [spaceKey(p, 'a'), spaceKey(p, 'b'), spaceKey(p, 'c')]),
        ];
      }),
    );
    const recall = async (testCase: (typeof cases)[number], index: number) => {
      const result = await callTool(server.mcpUrl, testCase.bearer, 'recall', { query: queryText(index), limit: 10, space: testCase.space });
      for (const memory of result.memories as { space: { id: string } }[]) testCase.spacesSeen.add(memory.space.id);
    };
    for (const testCase of cases) for (let i = 0; i < 20; i++) await recall(testCase, i);
    for (let round = 0; round < rounds; round++) {
      for (const testCase of cases) {
        const started = performance.now();
        await runFor(seconds, 1, async (index) => {
          const t0 = performance.now();
          await recall(testCase, round * 100_000 + index);
          testCase.latencies.push(performance.now() - t0);
        });
        testCase.wallMs += performance.now() - started;
      }
    }
    console.log('\n| space size | case | spaces searched (memories) | spaces in results | n | p50 ms | p95 ms | mean ms | ratio of p50 |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const person of people) {
      const mine = cases.filter((testCase) => testCase.person === person);
      const summaries = mine.map((testCase) => summarise(testCase.latencies, testCase.wallMs));
      const base = (name: string) => summaries[mine.findIndex((testCase) => testCase.name === name)]!.p50;
      for (const [i, testCase] of mine.entries()) {
        const summary = summaries[i]!;
        const searched = Array.isArray(testCase.space) ? testCase.space.length : 1;
        const against = testCase.name === 'shared (writer)' ? `${(summary.p50 / base('personal')).toFixed(2)} of personal` : testCase.name === 'three spaces' ? `${(summary.p50 / base('shared (writer)')).toFixed(2)} of one shared` : '';
        console.log(
          `| ${person.size} | ${testCase.name} | ${searched} (${searched * person.size}) | ${testCase.spacesSeen.size} | ${summary.count} | ${summary.p50.toFixed(1)} | ${summary.p95.toFixed(1)} | ${summary.mean.toFixed(1)} | ${against} |`,
        );
      }
    }
  } finally {
    await server.close();
  }
}

/**
 * Why one case costs more than another: the vector stage alone (recall's sizeForVectorRanking and vectorRanking,
 * depth 100, in this process), with the plan it chose: an exact scan of the candidates up to ExactScanLimit
 * (5000) of them, the HNSW index walk past it.
 */
async function vectorPlans(): Promise<void> {
  const db = await openDatabase({ url: BENCH_DATABASE_URL, dataDir: 'memory://', schema: seeded.schema, embeddingDimensions: LOCAL_MODEL_DIMENSIONS, migrate: false });
  const explained: string[] = [];
  try {
    console.log('\n| space size | case | candidates | vector plan | vector stage p50 ms | p95 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const [p, person] of people.entries()) {
      const three = [spaceKey(p, 'a'), spaceKey(p, 'b'), spaceKey(p, 'c')];
      for (const [name, keys, exactScanLimit] of [
        ['personal', [person.subject], DEFAULT_EXACT_SCAN_LIMIT],
        ['shared (writer)', [spaceKey(p, 'a')], DEFAULT_EXACT_SCAN_LIMIT],
        ['three spaces', three, DEFAULT_EXACT_SCAN_LIMIT],
        // The same three ranked exactly, as they would be under a higher ExactScanLimit.
        ['three spaces, ExactScanLimit 10000', three, 10_000],
      ] as const) {
        const plans = new Set<string>();
        const latencies: number[] = [];
        for (let q = 0; q < 60; q++) {
          const vector = storedVector(syntheticVector(queryText(q)), LOCAL_MODEL_NAME);
          const t0 = performance.now();
          const ranked = await db.withSubject(person.subject, 'benchmarking', async (trx) => {
            const size = await sizeForVectorRanking(trx, keys, NO_FILTERS, exactScanLimit, 200);
            return vectorRanking(trx, keys, NO_FILTERS, vector, 100, { exactScanLimit, size, efSearch: 200, recall: true });
          }, { readOnly: true });
          if (q >= 10) latencies.push(performance.now() - t0);
          plans.add(ranked.plan);
        }
        const summary = summarise(latencies, 1);
        console.log(`| ${person.size} | ${name} | ${keys.length * person.size} | ${[...plans].join('+')} | ${summary.p50.toFixed(1)} | ${summary.p95.toFixed(1)} |`);
      }
      explained.push(`${person.size} x 3: ${await explainExact(db, person.subject, three)}`);
    }
    console.log(`\nEXPLAIN ANALYZE of the exact ranking over the three spaces (the statement vectorRanking runs, as the reader):\n${explained.join('\n')}`);
  } finally {
    await db.close();
  }
}

/** The top plan nodes and execution time of the exact ranking of `keys` (what vectorRanking's exact pass does). */
async function explainExact(db: Awaited<ReturnType<typeof openDatabase>>, subject: string, keys: readonly string[]): Promise<string> {
  const vector = storedVector(syntheticVector(queryText(7)), LOCAL_MODEL_NAME);
  return db.withSubject(subject, 'explaining', async (trx) => {
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      explain (analyze, buffers)
      with probe as materialized (select ${vectorParameter(vector)} as vector)
      select id from memories, probe
       where ${vectorConditions(keys, NO_FILTERS, vector)}
       order by embedding <=> probe.vector, id desc limit 100`.execute(trx);
    const lines = rows.map((row) => row['QUERY PLAN']);
    return [...lines.filter((line) => /->|Limit/.test(line)).slice(0, 5), lines.at(-1)!].map((line) => `    ${line.trim()}`).join('\n');
  });
}
