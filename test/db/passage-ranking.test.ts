import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { findNearMemories } from '../../src/db/memories/near-memories.js';
import { insertMemory } from '../../src/db/memories/memories.js';
import { countStaleEmbeddings } from '../../src/db/memories/reembed.js';
import { subjectSize } from '../../src/db/memories/subject-stats.js';
import { vectorRanking } from '../../src/db/memories/vector-ranking.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector, type MemoryVectors } from '../../src/db/pgvector.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { importItems } from '../../src/memory/import.js';
import { reembedAll } from '../../src/memory/reembed.js';
import type { ImportItem } from '../../src/memory/types.js';
import { newMemory } from '../helpers/memories.js';
import { engines } from '../helpers/engines.js';
import { walkedAlongside } from '../helpers/index-walk.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Recall compares the question with each passage of a memory of several (migration 0013), on the exact scan and
 * on the index walk alike; remember's near-duplicate check compares whole texts only.
 */
const DIMS = 4;
const MODEL = 'passages-test';
const unit = (values: number[]) => {
  const norm = Math.hypot(...values);
  return storedVector(values.map((value) => value / norm), MODEL);
};

const question = unit([1, 0, 0, 0]);
/** A whole text leaning the question's way, of one passage: nearest by whole texts. */
const wholeNear: MemoryVectors = { whole: unit([0.8, 0.6, 0, 0]), passages: [] };
/** A paragraph whose whole text points elsewhere but one of whose passages is the question's. */
const paragraph: MemoryVectors = { whole: unit([0.6, 0, 1, 0]), passages: [unit([0, 0, 1, 0]), unit([1, 0, 0.05, 0])] };
const unrelated: MemoryVectors = { whole: unit([0, 0, 0, 1]), passages: [] };

/** An embedder that records every text it is given (in order) and answers each with a vector of its own. */
function recordingEmbedder(): { embedder: EmbeddingProvider; embedded: string[] } {
  const embedded: string[] = [];
  const embedder: EmbeddingProvider = {
    model: MODEL,
    dimensions: DIMS,
    embed: async (texts) => {
      embedded.push(...texts);
      return texts.map((_, index) => unit([index + 1, 1, 0, 0]).values as number[]);
    },
    ready: async () => {},
    close: async () => {},
  };
  return { embedder, embedded };
}

describe.each(engines)('passages in the vector ranking on %s', (engine) => {
  let db: DatabaseHandle;
  const subject = 'passage-subject';
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
    await db.withSubject(subject, 'inserting', async (trx) => {
      ids.wholeNear = await insertMemory(trx, subject, newMemory('Near as a whole.'), wholeNear);
      ids.paragraph = await insertMemory(trx, subject, newMemory('Far as a whole. Near in one sentence.'), paragraph);
      ids.unrelated = await insertMemory(trx, subject, newMemory('Unrelated.'), unrelated);
    });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  /** Every memory (3), so that the index walk, which answers only when it finds as many as asked, answers. */
  const rank = (passages: boolean, exactScanLimit: number) =>
    db.withSubject(subject, 'ranking', async (trx) =>
      vectorRanking(trx, subject, NO_FILTERS, question, 3, { exactScanLimit, size: await subjectSize(trx, subject), recall: passages }),
    );

  it('stores a passage vector per sentence, and none for a text of one', async () => {
    const rows = await db.withSubject(subject, 'reading', (trx) =>
      sql<{ id: string | number; passages: number | null }>`select id, cardinality(passage_embeddings) as passages from memories order by id`.execute(trx),
    );
    expect(rows.rows.map((row) => [Number(row.id), Number(row.passages)])).toEqual([
      [ids.wholeNear, 0],
      [ids.paragraph, 2],
      [ids.unrelated, 0],
    ]);
  });

  it('ranks a memory by its nearest passage on the exact scan, and by whole texts without passages', async () => {
    const withPassages = await rank(true, 5000);
    expect(withPassages.plan).toBe('exact');
    expect(withPassages.ids).toEqual([ids.paragraph, ids.wholeNear, ids.unrelated]);
    expect((await rank(false, 5000)).ids).toEqual([ids.wholeNear, ids.paragraph, ids.unrelated]);
  });

  it('re-ranks what the index walk found by the passages too', async () => {
    // An exact-scan limit of 0 sends this small subject down the index path, as a large one goes.
    const walked = await rank(true, 0);
    expect(walked.plan).toBe('hnsw');
    expect(walked.ids).toEqual([ids.paragraph, ids.wholeNear, ids.unrelated]);
    expect((await rank(false, 0)).ids).toEqual([ids.wholeNear, ids.paragraph, ids.unrelated]);
    expect(await walkedAlongside(db, subject, question, 3)).toEqual([ids.paragraph, ids.wholeNear, ids.unrelated]);
  });

  it('leaves remember’s near-duplicates to the whole texts', async () => {
    const near = await db.withSubject(subject, 'near', (trx) => findNearMemories(trx, subject, question, 0.6, 5, 5000));
    expect(near.map((memory) => memory.id)).toEqual([ids.wholeNear]);
  });

  it('has import store a memory’s passages, and a tombstone only its whole text’s vector', async () => {
    const importer = 'passage-importer';
    const { embedder, embedded } = recordingEmbedder();
    const when = new Date('2026-01-02T03:04:05Z');
    async function* items(): AsyncGenerator<ImportItem> {
      yield { kind: 'memory', source: { line: 1 }, memory: newMemory('Imported first. Imported second.'), timestamps: undefined, formerId: undefined, restatements: [] };
      yield { kind: 'memory', source: { line: 2 }, memory: newMemory('Imported alone.'), timestamps: undefined, formerId: undefined, restatements: [] };
      yield {
        kind: 'tombstone', source: { line: 3 }, text: 'Forgotten first. Forgotten second.', tags: [], reason: 'forgotten', note: undefined,
        memoryCreatedAt: when, tombstonedAt: when, formerId: undefined, formerReplacedBy: undefined, restatements: [],
      };
    }
    const summary = await importItems(db, embedder, importer, items(), { batchSize: 16 });
    expect(summary).toMatchObject({ memoriesImported: 2, tombstonesImported: 1, refused: 0 });
    // A text of several passages is embedded by its passages only (its whole vector is their mean), a tombstone's too.
    expect(embedded).toEqual(['Imported first.', 'Imported second.', 'Imported alone.', 'Forgotten first.', 'Forgotten second.']);
    const rows = await db.withSubject(importer, 'reading', (trx) =>
      sql<{ text: string; passages: number }>`select text, cardinality(passage_embeddings) as passages from memories order by id`.execute(trx),
    );
    expect(rows.rows.map((row) => [row.text, Number(row.passages)])).toEqual([['Imported first. Imported second.', 2], ['Imported alone.', 0]]);
  });

  it('has reembed split the memories stored before passages were, and only those', async () => {
    const legacy = await db.withSubject(subject, 'inserting', async (trx) => {
      const id = await insertMemory(trx, subject, newMemory('Stored long ago. Before passages existed.'), unrelated);
      await sql`update memories set passage_embeddings = null where id = ${id}`.execute(trx);
      return id;
    });
    const { embedder, embedded } = recordingEmbedder();
    expect(await db.withAllSubjects('counting', (trx) => countStaleEmbeddings(trx, 'memories', MODEL))).toBe(1);
    await reembedAll(db, embedder, { batchSize: 16, streams: 1 }, () => {});
    expect(embedded).toEqual(['Stored long ago.', 'Before passages existed.']);
    const row = await db.withSubject(subject, 'reading', (trx) =>
      sql<{ passages: number }>`select cardinality(passage_embeddings) as passages from memories where id = ${legacy}`.execute(trx),
    );
    expect(Number(row.rows[0]!.passages)).toBe(2);
    expect(await db.withAllSubjects('counting', (trx) => countStaleEmbeddings(trx, 'memories', MODEL))).toBe(0);
  });
});
