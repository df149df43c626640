import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { NO_FILTERS as noFilters } from '../../src/db/memories/filters.js';
import type { MemoryFilters } from '../../src/db/memories/records.js';
import { findNearMemories } from '../../src/db/memories/near-memories.js';
import { subjectSize } from '../../src/db/memories/subject-stats.js';
import { TEXT_RANKING_ORDER, textRanking, textRankingQuery, toTextHit } from '../../src/db/memories/text-ranking.js';
import { configureIterativeScan, hnswQuery, sizeForVectorRanking, vectorConditions, vectorRanking, walkAtOnce, walkIndexWith, type RankingSize } from '../../src/db/memories/vector-ranking.js';
import { indexedCosineDistance, storedVector, toVectorLiteral } from '../../src/db/pgvector.js';
import { engines } from '../helpers/engines.js';
import { normal } from '../helpers/prng.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Filtered vector search must return a subject's true nearest memories, however small a share of the table
 * the subject or the filter is. Checked against an independent exact search computed here in JavaScript.
 */
const DIMS = 32;
const MODEL = 'synthetic';
const TOPICS = 16;
const DEPTH = 50;
/** Low, so that the big subject goes through the HNSW path while the small ones stay exact. */
const EXACT_SCAN_LIMIT = 500;

/** Deterministic, so every run builds the same table. */
const gaussian = normal(42);
const centroids = Array.from({ length: TOPICS }, () => Array.from({ length: DIMS }, gaussian));
const near = (topic: number, spread: number) => centroids[topic]!.map((value) => value + spread * gaussian());

interface Row {
  subject: string;
  topic: number;
  tags: string[];
  vector: number[];
}

/**
 * 10,000 rows: "tiny" owns 10 (0.1 %), in topics far from where the queries look; "big" owns 2,000 (20 %), of
 * which "common" tags half and "rare" tags 1 %; 200 other subjects own the rest.
 */
function buildRows(): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < 10; i++) rows.push({ subject: 'tiny', topic: 8 + (i % 8), tags: i % 2 === 0 ? ['even'] : [], vector: near(8 + (i % 8), 0.8) });
  for (let i = 0; i < 2000; i++) {
    const tags = [...(i % 2 === 0 ? ['common'] : []), ...(i % 100 === 0 ? ['rare'] : [])];
    rows.push({ subject: 'big', topic: i % TOPICS, tags, vector: near(i % TOPICS, 0.8) });
  }
  for (let i = 0; i < 7990; i++) rows.push({ subject: `other-${i % 200}`, topic: i % TOPICS, tags: ['common'], vector: near(i % TOPICS, 0.8) });
  return rows;
}

function cosineDistance(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

describe.each(engines)('filtered vector recall against exact search on %s', (engine) => {
  let db: DatabaseHandle;
  const rows = buildRows();
  const ids: number[] = [];

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
    for (let start = 0; start < rows.length; start += 1000) {
      const batch = rows.slice(start, start + 1000);
      const inserted = await db.withAllSubjects('inspecting rows', (trx) =>
        trx
          .insertInto('memories')
          .values(
            batch.map((row, index) => ({
              subject: row.subject,
              text: `synthetic memory ${start + index} about topic ${row.topic}`,
              tags: row.tags,
              embedding: toVectorLiteral(row.vector),
              embedding_model: MODEL,
              embedding_dimensions: DIMS,
            })),
          )
          .returning('id')
          .execute(),
      );
      ids.push(...inserted.map((row) => Number(row.id)));
    }
    await db.withAllSubjects('inspecting rows', (trx) => sql`analyze memories`.execute(trx));
    // Building the data set maintains an HNSW index row by row: minutes on PGlite on a busy 2-core machine.
  }, 600_000);
  afterAll(() => closeTestDatabase(db));

  /** The true nearest ids, computed here from the generated vectors. */
  function exact(subject: string, query: readonly number[], keep: (row: Row) => boolean): number[] {
    return rows
      .map((row, index) => ({ row, id: ids[index]! }))
      .filter(({ row }) => row.subject === subject && keep(row))
      .map(({ row, id }) => ({ id, distance: cosineDistance(row.vector, query) }))
      .sort((a, b) => a.distance - b.distance || b.id - a.id)
      .slice(0, DEPTH)
      .map((item) => item.id);
  }

  const rank = (subject: string, query: readonly number[], filters: Partial<MemoryFilters>) =>
    db.withSubject(subject, 'inspecting rows', async (trx) =>
      vectorRanking(trx, subject, { ...noFilters, ...filters }, storedVector(query, MODEL), DEPTH, {
        exactScanLimit: EXACT_SCAN_LIMIT,
        size: await subjectSize(trx, subject),
      }),
    );

  // Queries in the big subjects' topics 0–7, where the tiny subject has nothing.
  const queries = Array.from({ length: 4 }, (_, index) => near(index, 0.3));

  it.each([
    ['a subject owning 0.1 % of the table', 'tiny', {}, () => true],
    ['a small subject with a tag filter', 'tiny', { tags: ['even'] }, (row: Row) => row.tags.includes('even')],
    ['a big subject with a rare tag (0.2 % of the table)', 'big', { tags: ['rare'] }, (row: Row) => row.tags.includes('rare')],
    ['a big subject with tags that must all match', 'big', { tags: ['common', 'rare'], tagMatch: 'all' as const }, (row: Row) => row.tags.includes('rare')],
  ])('ranks %s exactly', async (_name, subject, filters, keep) => {
    for (const query of queries) {
      const result = await rank(subject, query, filters);
      expect(result.plan).toBe('exact');
      expect(result.ids).toEqual(exact(subject, query, keep));
    }
  });

  it.each([
    ['a big subject (20 % of the table)', {}, () => true],
    ['a big subject with a tag on half its rows (10 % of the table)', { tags: ['common'] }, (row: Row) => row.tags.includes('common')],
  ])('walks the HNSW index for %s until enough rows pass, finding the true neighbours', async (_name, filters, keep) => {
    let found = 0;
    for (const query of queries) {
      const result = await rank('big', query, filters);
      const truth = exact('big', query, keep);
      expect(result.plan).toBe('hnsw');
      expect(result.ids).toHaveLength(DEPTH);
      found += result.ids.filter((id) => truth.includes(id)).length;
    }
    expect(found / (queries.length * DEPTH)).toBeGreaterThanOrEqual(0.95);
  });

  // remember's near-duplicate check: a subject above the exact-scan limit is searched through the index.
  const nearRows = (subject: string, vector: readonly number[], exactScanLimit: number) =>
    db.withSubject(subject, 'inspecting rows', (trx) => findNearMemories(trx, subject, storedVector(vector, MODEL), 0, 20, exactScanLimit));

  it('finds a big subject\'s stored vector again, and the exact scan\'s near rows, through the index', async () => {
    let overlap = 0;
    const probes = Array.from({ length: 20 }, (_, k) => rows.findIndex((row, index) => row.subject === 'big' && index % 97 === k));
    for (const index of probes) {
      const walked = await nearRows('big', rows[index]!.vector, EXACT_SCAN_LIMIT);
      const exactRows = await nearRows('big', rows[index]!.vector, Number.POSITIVE_INFINITY);
      expect(walked[0]?.id).toBe(ids[index]);
      expect(exactRows[0]?.id).toBe(ids[index]);
      // Best first by exact similarity, whichever way the candidates were found.
      expect(walked.map((row) => row.similarity)).toEqual([...walked.map((row) => row.similarity)].sort((a, b) => b - a));
      const truth = new Set(exactRows.map((row) => row.id));
      overlap += walked.filter((row) => truth.has(row.id)).length / exactRows.length;
    }
    expect(overlap / probes.length).toBeGreaterThanOrEqual(0.95);
  });

  it("finds a big subject's memory by its exact text where the index walk does not reach it", async () => {
    const index = rows.findIndex((row) => row.subject === 'big' && row.topic === 0);
    const text = `synthetic memory ${index} about topic 0`;
    // Nearest to another topic's centre: the walk's 20 rows are that topic's, never this one.
    const elsewhere = storedVector(centroids[5]!, MODEL);
    const near = (withText: string | undefined) =>
      db.withSubject('big', 'inspecting rows', (trx) => findNearMemories(trx, 'big', elsewhere, -1, 20, EXACT_SCAN_LIMIT, { text: withText }));
    expect((await near(undefined)).map((row) => row.id)).not.toContain(ids[index]);
    const found = await near(text);
    expect(found[0]?.id).toBe(ids[index]);
    expect(found[0]?.text).toBe(text);
    expect(found).toHaveLength(20);
  });

  it("answers a big subject's near-duplicate check exactly when the walk comes back short, and puts the planner settings back", async () => {
    // Three rows of a second model in the big subject: the walk (for that model's rows) finds fewer than 20.
    const second = 'second-model';
    const vectors = [near(3, 0.3), near(3, 0.3), near(11, 0.3)];
    const query = near(3, 0.3);
    const rollback = new Error('rollback');
    let seen: { found: number[]; truth: number[]; before: unknown; after: unknown } | undefined;
    await db
      .withSubject('big', 'inspecting rows', async (trx) => {
        const inserted = await trx
          .insertInto('memories')
          .values(vectors.map((vector, index) => ({ subject: 'big', text: `second model ${index}`, tags: [], embedding: toVectorLiteral(vector), embedding_model: second, embedding_dimensions: DIMS })))
          .returning('id')
          .execute();
        const truth = inserted
          .map((row, index) => ({ id: Number(row.id), distance: cosineDistance(vectors[index]!, query) }))
          .sort((a, b) => a.distance - b.distance || b.id - a.id)
          .map((row) => row.id);
        const settings = sql<{ sort: string; jit: string; plans: string }>`select current_setting('enable_sort') as sort, current_setting('jit') as jit, current_setting('plan_cache_mode') as plans`;
        const before = (await settings.execute(trx)).rows[0];
        const found = await findNearMemories(trx, 'big', storedVector(query, second), -1, 20, EXACT_SCAN_LIMIT, { text: 'no such text', lockForWrite: true });
        seen = { found: found.map((row) => row.id), truth, before, after: (await settings.execute(trx)).rows[0] };
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    expect(seen?.found).toEqual(seen?.truth);
    expect(seen?.found).toHaveLength(3);
    expect(seen?.after).toEqual(seen?.before);
  });

  it("ranks a big subject's text in the index walk's statement exactly as in a statement of its own", async () => {
    const question = (index: number) => `synthetic memory ${index} about topic ${index % TOPICS}`;
    for (const index of [1234, 77, 1999]) {
      const vector = storedVector(near(index % TOPICS, 0.3), MODEL);
      const words = question(index);
      const separate = await db.withSubject('big', 'inspecting rows', async (trx) => {
        const size = await sizeForVectorRanking(trx, 'big', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const ranked = await vectorRanking(trx, 'big', noFilters, vector, DEPTH, { exactScanLimit: EXACT_SCAN_LIMIT, size, efSearch: 2 * DEPTH });
        return { ...ranked, hits: await textRanking(trx, 'big', noFilters, words, DEPTH, size.memories) };
      });
      const together = await db.withSubject('big', 'inspecting rows', async (trx) => {
        const size = await sizeForVectorRanking(trx, 'big', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const restore = walkAtOnce(size, vector, EXACT_SCAN_LIMIT);
        if (restore === undefined) throw new Error('the big subject should walk the index at once');
        const both = await walkIndexWith(trx, 'big', vector, DEPTH, restore, size.inConversations, [{ query: textRankingQuery('big', noFilters, words, DEPTH, size.memories), order: TEXT_RANKING_ORDER }] as const);
        return { ids: both.ids, plan: both.plan, hits: both.alongside[0].map(toTextHit) };
      });
      expect(separate.plan).toBe('hnsw');
      expect(separate.hits.map((hit) => hit.id)).toContain(ids[index]);
      expect(together).toEqual(separate);
    }
  });

  it('prepares the index walk once per PostgreSQL connection and plans it once, with the rows of a statement planned each time', async () => {
    const seen = await db.withSubject('big', 'inspecting rows', async (trx) => {
      const walks: { prepared: unknown; planned: unknown }[] = [];
      for (const index of [5, 600, 1500]) {
        const vector = storedVector(near(index % TOPICS, 0.3), MODEL);
        const size = await sizeForVectorRanking(trx, 'big', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const restore = walkAtOnce(size, vector, EXACT_SCAN_LIMIT);
        if (restore === undefined) throw new Error('the big subject should walk the index at once');
        const text = { query: textRankingQuery('big', noFilters, `synthetic memory ${index}`, DEPTH, size.memories), order: TEXT_RANKING_ORDER };
        const prepared = await walkIndexWith(trx, 'big', vector, DEPTH, restore, size.inConversations, [text] as const);
        // The same statement without its mark: sent unnamed, so planned for these values.
        await sizeForVectorRanking(trx, 'big', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const compiled = sql`with walked as materialized (${hnswQuery(vectorConditions('big', noFilters, vector), vector, DEPTH, restore)}),
               alongside as materialized (${text.query})
          select (select coalesce(json_agg(id order by distance, id desc), '[]') from walked) as ids,
                 (select coalesce(json_agg(alongside order by ${text.order}), '[]') from alongside) as alongside`.compile(trx);
        const { rows: [planned] } = await trx.executeQuery<{ ids: number[]; alongside: unknown[] }>(compiled);
        walks.push({ prepared: { ids: prepared.ids, alongside: prepared.alongside[0] }, planned: { ids: planned?.ids.map(Number), alongside: planned?.alongside } });
      }
      const { rows: statements } = await sql<{ generic_plans: string; custom_plans: string }>`
        select generic_plans, custom_plans from pg_prepared_statements where statement like '/* prepared */%with vector_ranked as materialized%alongside_0%'`.execute(trx);
      return { walks, statements };
    });
    for (const walk of seen.walks) expect(walk.prepared).toEqual(walk.planned);
    if (engine === 'pglite') {
      // PGlite's driver sends every statement unnamed.
      expect(seen.statements).toEqual([]);
    } else {
      expect(seen.statements).toHaveLength(1);
      expect(Number(seen.statements[0]!.generic_plans)).toBeGreaterThanOrEqual(3);
      expect(Number(seen.statements[0]!.custom_plans)).toBe(0);
    }
  });

  it.each([
    ['a small subject', 'tiny', {}, 'exact'],
    ['a small subject with a tag filter', 'tiny', { tags: ['even'] }, 'exact'],
    ['a big subject whose filter leaves few candidates', 'big', { tags: ['rare'] }, 'exact'],
    ['a big subject whose filter leaves too many to scan (the index walk follows)', 'big', { tags: ['common'] }, 'hnsw'],
  ])("ranks %s's text in the vector ranking's first statement exactly as in a statement of its own", async (_name, subject, filters, plan) => {
    const all: MemoryFilters = { ...noFilters, ...filters };
    // Questions with the words of three of the subject's memories that pass the filter.
    const passing = rows.flatMap((row, index) => (row.subject === subject && all.tags.every((tag) => row.tags.includes(tag)) ? [index] : []));
    for (const index of [passing[0]!, passing[Math.floor(passing.length / 2)]!, passing.at(-1)!]) {
      const vector = storedVector(near(rows[index]!.topic, 0.3), MODEL);
      const words = `synthetic memory ${index} about topic ${rows[index]!.topic}`;
      const options = (size: RankingSize) => ({ exactScanLimit: EXACT_SCAN_LIMIT, size, efSearch: 2 * DEPTH });
      const separate = await db.withSubject(subject, 'inspecting rows', async (trx) => {
        const size = await sizeForVectorRanking(trx, subject, all, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const ranked = await vectorRanking(trx, subject, all, vector, DEPTH, options(size));
        return { ids: ranked.ids, plan: ranked.plan, hits: await textRanking(trx, subject, all, words, DEPTH, size.memories) };
      });
      const together = await db.withSubject(subject, 'inspecting rows', async (trx) => {
        const size = await sizeForVectorRanking(trx, subject, all, EXACT_SCAN_LIMIT, 2 * DEPTH);
        const both = await vectorRanking(trx, subject, all, vector, DEPTH, options(size), [{ query: textRankingQuery(subject, all, words, DEPTH, size.memories), order: TEXT_RANKING_ORDER }] as const);
        return { ids: both.ids, plan: both.plan, hits: both.alongside?.[0].map(toTextHit) };
      });
      expect(separate.plan).toBe(plan);
      expect(separate.hits.map((hit) => hit.id)).toContain(ids[index]);
      expect(together).toEqual(separate);
    }
  });

  it('scans a small subject exactly for near rows', async () => {
    const query = near(9, 0.3);
    const found = await nearRows('tiny', query, EXACT_SCAN_LIMIT);
    const truth = exact('tiny', query, (row) => 1 - cosineDistance(row.vector, query) >= 0);
    expect(truth.length).toBeGreaterThan(0);
    expect(found.map((row) => row.id)).toEqual(truth.slice(0, 20));
  });

  it('puts the planner settings back after the walk, for the rest of the transaction', async () => {
    const settings = (trx: Parameters<Parameters<DatabaseHandle['withSubject']>[2]>[0]) =>
      sql<{ sort: string; jit: string; plans: string }>`select current_setting('enable_sort') as sort, current_setting('jit') as jit, current_setting('plan_cache_mode') as plans`.execute(trx);
    const [before, after, plan] = await db.withSubject('big', 'inspecting rows', async (trx) => {
      const seen = (await settings(trx)).rows[0];
      const ranked = await vectorRanking(trx, 'big', noFilters, storedVector(queries[0]!, MODEL), DEPTH, {
        exactScanLimit: EXACT_SCAN_LIMIT,
        size: await subjectSize(trx, 'big'),
      });
      return [seen, (await settings(trx)).rows[0], ranked.plan];
    });
    expect(plan).toBe('hnsw');
    expect(after).toEqual(before);
  });

  it('puts them back too when they were applied with the size (recall and remember read both in one statement)', async () => {
    const settings = (trx: Parameters<Parameters<DatabaseHandle['withSubject']>[2]>[0]) =>
      sql<{ sort: string; jit: string; plans: string; ef: string }>`select current_setting('enable_sort') as sort, current_setting('jit') as jit, current_setting('plan_cache_mode') as plans, current_setting('hnsw.ef_search') as ef`.execute(trx);
    const [before, during, after, plan] = await db.withSubject('big', 'inspecting rows', async (trx) => {
      const seen = (await settings(trx)).rows[0];
      const size = await sizeForVectorRanking(trx, 'big', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH);
      const applied = (await settings(trx)).rows[0];
      const ranked = await vectorRanking(trx, 'big', noFilters, storedVector(queries[0]!, MODEL), DEPTH, { exactScanLimit: EXACT_SCAN_LIMIT, size });
      return [seen, applied, (await settings(trx)).rows[0], ranked.plan];
    });
    const small = await db.withSubject('tiny', 'inspecting rows', (trx) => sizeForVectorRanking(trx, 'tiny', noFilters, EXACT_SCAN_LIMIT, 2 * DEPTH));
    expect(during).toEqual({ sort: 'off', jit: 'off', plans: 'force_generic_plan', ef: String(Math.max(100, 2 * DEPTH)) });
    expect(plan).toBe('hnsw');
    expect(after).toEqual({ ...before, ef: during?.ef });
    // A small subject is ranked exactly: nothing is applied for it.
    expect(small).toMatchObject({ memories: 10, walkSettings: undefined });
  });

  it('reaches the HNSW index on that path', async () => {
    const vector = storedVector(queries[0]!, MODEL);
    const plan = await db.withSubject('big', 'inspecting rows', async (trx) => {
      await configureIterativeScan(trx, DEPTH);
      const query = hnswQuery(vectorConditions('big', noFilters, vector), vector, DEPTH).compile(trx);
      const { rows: lines } = await trx.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `explain ${query.sql}` });
      return lines.map((line) => line['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(new RegExp(`Index Scan using memories_embedding_hnsw_${DIMS}`));
  });

  it('would return leftovers from a plain global index scan (why the plan above exists)', async () => {
    const query = queries[0]!;
    const leftovers = await db.withAllSubjects('inspecting rows', async (trx) => {
      await sql`select set_config('hnsw.iterative_scan', 'off', true)`.execute(trx);
      const { rows: found } = await sql<{ subject: string }>`
        select subject from memories where embedding_dimensions = ${DIMS}
         order by ${indexedCosineDistance(storedVector(query, MODEL))}
         limit ${DEPTH}`.execute(trx);
      return found.filter((row) => row.subject === 'tiny').length;
    });
    expect(leftovers).toBeLessThan(DEPTH / 10);
    expect((await rank('tiny', query, {})).ids).toHaveLength(10);
  });
});
