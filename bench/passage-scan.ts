// What the passages cost recall's exact scan: the vector ranking's statement over each LoCoMo subject, on the
// database bench/recall-quality.ts seeded (PGlite): turns (~600 memories a subject, ~3 passages each, the arrays
// in TOAST) or observations (one sentence each, no passages). Five forms, run alternately in this one process:
//  - whole: whole-text distance only (no passages);
//  - two reads: `case when cardinality(passages) > 0 then mix else whole end` (as first landed), which reads
//    each array out of TOAST twice;
//  - nearest or whole: `coalesce(mix, whole)`, which reads it once but runs the nearest-passage subquery for a
//    memory without passages too;
//  - served: `case when pg_column_size(passages) > 16 …`: the array's stored size says whether it has passages
//    without reading it;
//  - served, turns read: that, and the first 100 each read with the turn after it (withTurnsRead), as recall ranks.
// Whole and the served forms are the statement src/db/memories/vector-ranking.ts sends (exactRankingQuery), compiled
// here; the other two are written out as they were first tried. Probes are stored memories' own vectors (no model
// needed); the passage forms must rank identically.
// Run: npx tsx bench/recall-quality.ts turns observations (once, to seed), then
//      npx tsx bench/passage-scan.ts [turns|observations] [rounds=5] [probes=10]
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { NO_FILTERS } from '../src/db/memories/filters.js';
import { exactRankingQuery, vectorConditions, type Reading } from '../src/db/memories/vector-ranking.js';
import { PGliteDialect } from '../src/db/pglite-dialect.js';
import { openPGlite } from '../src/db/pglite-open.js';
import { storedVector } from '../src/db/pgvector.js';
import { median } from './lib/stats.js';

const set = process.argv[2] ?? 'turns';
const rounds = Number(process.argv[3] ?? 5);
const probesPerSubject = Number(process.argv[4] ?? 10);

const dataRoot = new URL('./.data/', import.meta.url).pathname;
const seeded = (existsSync(dataRoot) ? readdirSync(dataRoot) : [])
  .filter((name) => name.startsWith(`locomo-${set}-`) && existsSync(join(dataRoot, name, 'dia-ids.json')))
  .map((name) => join(dataRoot, name))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
if (seeded === undefined) throw new Error(`no seeded LoCoMo ${set} database under bench/.data: run \`npx tsx bench/recall-quality.ts ${set}\` first`);
// A copy, so that this benchmark never holds the harness's database open.
const copy = mkdtempSync(join(tmpdir(), 'passage-scan-'));
cpSync(join(seeded, 'pglite'), copy, { recursive: true });
const db = await openPGlite(copy);
// Only to compile src's statements; they run on `db` directly, as the hand-written forms do.
const compiler = new Kysely<unknown>({ dialect: new PGliteDialect(db) });

const WHOLE = `embedding <=> probe.vector`;
const NEAREST = `(select min(passage <=> probe.vector) from unnest(passage_embeddings) as passage)`;
const MIX = `0.3 * (${WHOLE}) + 0.7 * ${NEAREST}`;
const HAND_WRITTEN: Record<string, string> = {
  'two reads': `case when cardinality(passage_embeddings) > 0 then ${MIX} else ${WHOLE} end`,
  'nearest or whole': `coalesce(${MIX}, ${WHOLE})`,
};
const LIVE = `subject = $1 and (expires_at is null or expires_at > now())`;
const handWritten = (distance: string) =>
  `with probe as materialized (select $2::vector as vector)
   select id from memories, probe where ${LIVE} order by ${distance}, id desc limit 100`;
// Since 2026-12-01 recall also reads each of the first 100 with the turn after it in its conversation
// (vector-ranking.ts, withTurnsRead): timed beside the passage forms, as recall ranks (the ranking differs by design).
const SERVED: Record<string, Reading> = { whole: 'whole', served: 'passages', 'served, turns read': 'passages and turns' };
const FORM_NAMES = ['whole', ...Object.keys(HAND_WRITTEN), 'served', 'served, turns read'];

interface Probe {
  subject: string;
  vector: string;
  model: string;
}
function statementOf(name: string, probe: Probe): { sql: string; parameters: readonly unknown[] } {
  const reading = SERVED[name];
  if (reading === undefined) return { sql: handWritten(HAND_WRITTEN[name]!), parameters: [probe.subject, probe.vector] };
  const vector = storedVector(JSON.parse(probe.vector) as number[], probe.model);
  return exactRankingQuery(vectorConditions(probe.subject, NO_FILTERS, vector), vector, 100, reading).compile(compiler);
}

const subjects = (await db.query<{ subject: string }>(`select distinct subject from memories order by subject`)).rows.map((row) => row.subject);
const probes: Probe[] = [];
for (const subject of subjects) {
  const { rows } = await db.query<{ vector: string; model: string }>(
    `select embedding::text as vector, embedding_model as model from memories where subject = $1 order by id limit $2`,
    [subject, probesPerSubject],
  );
  probes.push(...rows.map((row) => ({ subject, ...row })));
}
const statements = probes.map((probe) => new Map(FORM_NAMES.map((name) => [name, statementOf(name, probe)])));
const { rows: shape } = await db.query<{ memories: number; passages: number }>(
  `select count(*)::int as memories, coalesce(sum(cardinality(passage_embeddings)), 0)::int as passages from memories`,
);

const times = new Map(FORM_NAMES.map((name) => [name, [] as number[]]));
let disagreements = 0;
for (let round = 0; round <= rounds; round++) {
  const names = round % 2 === 1 ? [...FORM_NAMES].reverse() : FORM_NAMES;
  for (const index of probes.keys()) {
    const orders = new Map<string, string>();
    for (const name of names) {
      const statement = statements[index]!.get(name)!;
      const started = performance.now();
      const { rows } = await db.query<{ id: number }>(statement.sql, [...statement.parameters]);
      // Round 0 warms the cache and the plans; it is not counted.
      if (round > 0) times.get(name)!.push(performance.now() - started);
      orders.set(name, rows.map((row) => row.id).join(','));
    }
    if (orders.get('two reads') !== orders.get('served') || orders.get('nearest or whole') !== orders.get('served')) disagreements += 1;
  }
}
await db.close();
rmSync(copy, { recursive: true, force: true });

const whole = median(times.get('whole')!);
console.log(
  `passage scan, LoCoMo ${set}: ${subjects.length} subjects, ${shape[0]!.memories} memories, ${shape[0]!.passages} passages; ` +
    `${probes.length} probes × ${rounds} rounds, forms alternating; node ${process.version}`,
);
for (const [name, values] of times) {
  console.log(`${name.padEnd(18)} median ${median(values).toFixed(2)} ms a statement (${(median(values) / whole).toFixed(2)} × whole)`);
}
console.log(`passage forms: ${disagreements} of ${probes.length * (rounds + 1)} probes ranked differently by one of them`);
