import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../../src/transfer/export-format.js';
import { importFile } from '../../src/transfer/import-file.js';
import { engines } from '../helpers/engines.js';
import { gatedEmbedder } from '../helpers/gated-embedder.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Import never gives a tombstone the id of a memory (issue 38, finding 9): a crafted file names the same former id
 * for a memory and a tombstone, or for two tombstones, or for a memory already stored; every memory then stays
 * forgettable and correctable, and no id is held by two rows.
 */
const HEADER = { format: EXPORT_FORMAT, version: EXPORT_VERSION };
const tombstone = (id: number, text: string, extra: Record<string, unknown> = {}) => ({
  type: 'tombstone',
  memory_id: id,
  text,
  tags: [],
  reason: 'forgotten',
  memory_created_at: '2026-01-01T00:00:00.000Z',
  tombstoned_at: '2026-01-02T00:00:00.000Z',
  ...extra,
});
const memory = (id: number, text: string) => ({ type: 'memory', memory_id: id, text, tags: [], importance: 0.5 });
const file = (...lines: object[]) => Buffer.from([HEADER, ...lines].map((line) => JSON.stringify(line)).join('\n'));

describe.each(engines)('import ids on %s', (engine) => {
  // One item per batch: a former id's mapping is known to later batches (within one, it is settled at its end).
  const batchSize = 1;
  let db: DatabaseHandle;
  let service: MemoryService;

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: 3 });
    service = new MemoryService({ db, embedder: gatedEmbedder('m', 1).embedder, nearDuplicateThreshold: 0.99 });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const rows = (subject: string) =>
    db.withSubject(subject, 'reading', async (trx) => ({
      memories: (await sql<{ id: number; text: string }>`select id::int as id, text from memories order by id`.execute(trx)).rows,
      tombstones: (await sql<{ id: number; text: string; replaced_by: number | null }>`select memory_id::int as id, text, replaced_by::int as replaced_by from tombstones order by tombstoned_at, text`.execute(trx)).rows,
    }));
  const run = (subject: string, bytes: Buffer) => importFile(service, subject, [bytes], { maxTextChars: 1000, batchSize });

  /** No id held twice, and every memory can still be forgotten (odd) or corrected (even). */
  async function expectUsable(subject: string) {
    const { memories, tombstones } = await rows(subject);
    const ids = [...memories, ...tombstones].map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [index, row] of memories.entries()) {
      if (index % 2 === 0) await expect(service.forget(subject, row.id, undefined)).resolves.toEqual({ memoryId: row.id, space: { id: 'personal', name: 'Personal' } });
      else await expect(service.correct(subject, row.id, { text: `${row.text} (corrected)`, tags: undefined, importance: undefined, sourceProvider: undefined, captureMode: undefined, sessionId: undefined, expiresAt: undefined, note: undefined })).resolves.toMatchObject({ replacedMemoryId: row.id });
    }
  }

  it('a tombstone naming the former id of a memory in the same file gets an id of its own', async () => {
    const summary = await run('same-file', file(memory(5, 'Lives in Lisbon.'), tombstone(5, 'Lived in Porto.'), memory(6, 'Likes tea.'), tombstone(6, 'Liked coffee.')));
    expect(summary).toMatchObject({ memoriesImported: 2, tombstonesImported: 2, refused: 0 });
    await expectUsable('same-file');
  });

  it('a tombstone naming the former id of a memory already stored (skipped as a duplicate) gets an id of its own', async () => {
    const subject = 'stored-before';
    await service.remember(subject, newMemory('Works at Acme.'), 'insert');
    const summary = await run(subject, file(memory(9, 'Works at Acme.'), tombstone(9, 'Worked at Initech.')));
    expect(summary).toMatchObject({ memoriesImported: 0, duplicatesSkipped: 1, tombstonesImported: 1 });
    await expectUsable(subject);
  });

  it('two tombstones with one former id get two ids', async () => {
    const summary = await run('twice', file(tombstone(3, 'Drove a Fiat.'), tombstone(3, 'Drove a Volvo.'), memory(4, 'Drives a bicycle.')));
    expect(summary).toMatchObject({ memoriesImported: 1, tombstonesImported: 2, refused: 0 });
    await expectUsable('twice');
  });

  it('still links a chain of corrections: a tombstone named by an earlier replaced_by takes the id reserved for it', async () => {
    const subject = 'chain';
    const summary = await run(subject, file(tombstone(1, 'Owns a cat.', { reason: 'corrected', replaced_by: 2 }), tombstone(2, 'Owns two cats.', { reason: 'corrected', replaced_by: 3, tombstoned_at: '2026-01-03T00:00:00.000Z' }), memory(3, 'Owns three cats.')));
    expect(summary).toMatchObject({ memoriesImported: 1, tombstonesImported: 2, refused: 0 });
    const { tombstones } = await rows(subject);
    expect(tombstones.map((row) => row.text)).toEqual(['Owns a cat.', 'Owns two cats.']);
    expect(tombstones[0]!.replaced_by).toBe(tombstones[1]!.id);
    await expectUsable(subject);
  });
});
