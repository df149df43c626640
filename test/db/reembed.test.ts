import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteMemory, insertMemory } from '../../src/db/memories/memories.js';
import { countStaleEmbeddings } from '../../src/db/memories/reembed.js';
import { insertRestatement } from '../../src/db/memories/restatements.js';
import { insertTombstone } from '../../src/db/memories/tombstones.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector } from '../../src/db/pgvector.js';
import { reembedAll } from '../../src/memory/reembed.js';
import { gatedEmbedder } from '../helpers/gated-embedder.js';
import { newMemory } from '../helpers/memories.js';
import { engines } from '../helpers/engines.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/** `reembed` embeds several batches at once (one per worker of the provider), each under a key of its own. */
const DIMS = 3;
const OLD_MODEL = 'old-model';
const NEW_MODEL = 'new-model';
const TEXTS = ['First fact.', 'Second fact.', 'Third fact.', 'Fourth fact.', 'Fifth fact.', 'Sixth fact.'];

describe.each(engines)('reembed on %s', (engine) => {
  let db: DatabaseHandle;
  const subject = 'reembed-subject';

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const storeStale = () =>
    db.withSubject(subject, 'inserting', async (trx) => {
      await sql`delete from memories`.execute(trx);
      for (const text of TEXTS) await insertMemory(trx, subject, newMemory(text), { whole: storedVector([1, 0, 0], OLD_MODEL), passages: [] });
    });
  const stale = () => db.withAllSubjects('counting', (trx) => countStaleEmbeddings(trx, 'memories', NEW_MODEL));

  it('embeds `streams` batches at once, each under its own key, and every stale memory exactly once', async () => {
    await storeStale();
    const { embedder, seen } = gatedEmbedder(NEW_MODEL, 2);
    const counts = await reembedAll(db, embedder, { batchSize: 2, streams: 2 }, () => {});
    expect(counts).toEqual({ memories: TEXTS.length, tombstones: 0, restatements: 0 });
    expect(seen.mostAtOnce).toBe(2);
    expect([...seen.keys].sort()).toEqual(['reembed:0', 'reembed:1']);
    expect([...seen.texts].sort()).toEqual([...TEXTS].sort());
    expect(await stale()).toBe(0);
    const rows = await db.withSubject(subject, 'reading', (trx) => sql<{ embedding_model: string }>`select embedding_model from memories`.execute(trx));
    expect(rows.rows.map((row) => row.embedding_model)).toEqual(TEXTS.map(() => NEW_MODEL));
  });

  it('stops when a batch fails, keeps what the others wrote, and a second run finishes the rest', async () => {
    await storeStale();
    const failing = gatedEmbedder(NEW_MODEL, 2, new Set(['Third fact.']));
    await expect(reembedAll(db, failing.embedder, { batchSize: 2, streams: 2 }, () => {})).rejects.toThrow('the model failed');
    // The failed batch wrote nothing; the streams stopped after their current batch.
    const left = await stale();
    expect(left).toBeGreaterThanOrEqual(2);
    expect(left).toBeLessThan(TEXTS.length);
    const { embedder, seen } = gatedEmbedder(NEW_MODEL, 1);
    expect(await reembedAll(db, embedder, { batchSize: 2, streams: 2 }, () => {})).toEqual({ memories: left, tombstones: 0, restatements: 0 });
    expect(seen.texts).toContain('Third fact.');
    expect(await stale()).toBe(0);
  });

  it('marks the tombstone of a memory awaiting reembed as stale too, and reembed makes its vector anew', async () => {
    const tombstones = await db.withSubject(subject, 'forgetting', async (trx) => {
      await sql`delete from memories`.execute(trx);
      await sql`delete from tombstones`.execute(trx);
      const current = await insertMemory(trx, subject, newMemory('Split since 0014. Two passages.'), { whole: storedVector([1, 0, 0], NEW_MODEL), passages: [] });
      const awaiting = await insertMemory(trx, subject, newMemory('Split before 0014. Its paragraph vector.'), { whole: storedVector([0, 1, 0], NEW_MODEL), passages: [] });
      await sql`update memories set passage_embeddings = null where id = ${awaiting}`.execute(trx);
      for (const id of [current, awaiting]) await insertTombstone(trx, subject, (await deleteMemory(trx, subject, id))!, 'forgotten', undefined, undefined);
      return (await sql<{ text: string; whole_from_passages: boolean }>`select text, whole_from_passages from tombstones order by id`.execute(trx)).rows;
    });
    expect(tombstones).toEqual([
      { text: 'Split since 0014. Two passages.', whole_from_passages: true },
      { text: 'Split before 0014. Its paragraph vector.', whole_from_passages: false },
    ]);
    const staleTombstones = () => db.withAllSubjects('counting', (trx) => countStaleEmbeddings(trx, 'tombstones', NEW_MODEL));
    expect(await staleTombstones()).toBe(1);
    const { embedder, seen } = gatedEmbedder(NEW_MODEL, 1);
    expect(await reembedAll(db, embedder, { batchSize: 2, streams: 1 }, () => {})).toEqual({ memories: 0, tombstones: 1, restatements: 0 });
    // By its passages, as a text remembered again is embedded.
    expect(seen.texts).toEqual(['Split before 0014.', 'Its paragraph vector.']);
    expect(await staleTombstones()).toBe(0);
  });
  it('embeds a restatement of another model anew, with the vector of its whole text', async () => {
    await db.withSubject(subject, 'restating', async (trx) => {
      await sql`delete from memories`.execute(trx);
      const memory = await insertMemory(trx, subject, newMemory('The user keeps bees.'), { whole: storedVector([1, 0, 0], NEW_MODEL), passages: [] });
      const restatement = { text: 'User keeps bees. On the roof.', tags: [], sourceProvider: undefined, captureMode: undefined, sessionId: undefined };
      expect(await insertRestatement(trx, subject, memory, restatement, storedVector([0, 1, 0], OLD_MODEL))).toBe(true);
    });
    const staleRestatements = () => db.withAllSubjects('counting', (trx) => countStaleEmbeddings(trx, 'memory_restatements', NEW_MODEL));
    expect(await staleRestatements()).toBe(1);
    const { embedder, seen } = gatedEmbedder(NEW_MODEL, 1);
    expect(await reembedAll(db, embedder, { batchSize: 2, streams: 1 }, () => {})).toEqual({ memories: 0, tombstones: 0, restatements: 1 });
    expect(seen.texts).toEqual(['User keeps bees.', 'On the roof.']);
    expect(await staleRestatements()).toBe(0);
    const rows = await db.withSubject(subject, 'reading', (trx) => sql<{ embedding_model: string; embedding_dimensions: number }>`select embedding_model, embedding_dimensions from memory_restatements`.execute(trx));
    expect(rows.rows).toEqual([{ embedding_model: NEW_MODEL, embedding_dimensions: DIMS }]);
  });
});
