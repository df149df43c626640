import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { importItems } from '../../src/memory/import.js';
import type { ImportItem } from '../../src/memory/types.js';
import { engines } from '../helpers/engines.js';
import { gatedEmbedder, vectorOfText } from '../helpers/gated-embedder.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * `memory-service import` splits each batch's embedding into one call per worker, made at once under keys of their
 * own; the memories are stored in the file's order, each with its own text's vector.
 */
const TEXTS = ['Alpha fact.', 'Bravo facts.', 'Charlie facts!', 'Delta fact, long.', 'Echo fact again.', 'Foxtrot, a fact.', 'Golf.'];

describe.each(engines)('import in streams on %s', (engine) => {
  let db: DatabaseHandle;

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: 3 });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  async function* items(): AsyncGenerator<ImportItem> {
    for (const [index, text] of TEXTS.entries()) {
      yield { kind: 'memory', source: { line: index + 1 }, memory: newMemory(text), timestamps: undefined, formerId: undefined, restatements: [] };
    }
  }
  const stored = (subject: string) =>
    db.withSubject(subject, 'reading', async (trx) => (await sql<{ text: string; embedding: string }>`select text, embedding::text as embedding from memories order by id`.execute(trx)).rows);

  it('embeds a batch in `streams` calls at once, each under its own key, and stores each text with its own vector', async () => {
    const { embedder, seen } = gatedEmbedder('m', 2);
    const summary = await importItems(db, embedder, 'streamed', items(), { batchSize: 16, streams: 2 });
    expect(summary).toMatchObject({ memoriesImported: TEXTS.length, refused: 0 });
    expect(seen.mostAtOnce).toBe(2);
    expect([...seen.keys].sort()).toEqual(['import:0', 'import:1']);
    const rows = await stored('streamed');
    expect(rows.map((row) => row.text)).toEqual(TEXTS);
    for (const row of rows) {
      const vector = JSON.parse(row.embedding) as number[];
      vectorOfText(row.text).forEach((value, index) => expect(vector[index]).toBeCloseTo(value, 5));
    }
  });

  it('keeps one call under the subject’s key by default, as a request’s', async () => {
    const { embedder, seen } = gatedEmbedder('m', 1);
    await importItems(db, embedder, 'one-stream', items(), { batchSize: 16 });
    expect(seen.mostAtOnce).toBe(1);
    expect([...seen.keys]).toEqual(['one-stream']);
    expect((await stored('one-stream')).map((row) => row.text)).toEqual(TEXTS);
  });
});
