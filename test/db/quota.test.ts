import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { isServiceError } from '../../src/errors.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import type { SubjectQuota } from '../../src/memory/quota.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../../src/transfer/export-format.js';
import { importFile } from '../../src/transfer/import-file.js';
import { engines } from '../helpers/engines.js';
import { gatedEmbedder } from '../helpers/gated-embedder.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';
import { subjectCountMismatchesSql } from '../helpers/stored-counts.js';

/**
 * Per-subject quotas (issue 38, finding 6): remember, correct and import stop at MaxMemoriesPerSubject and
 * MaxBytesPerSubject with QUOTA_EXCEEDED, storing nothing past it; the bytes are kept by subject_stats' trigger.
 */
describe.each(engines)('per-subject quotas on %s', (engine) => {
  let db: DatabaseHandle;
  const service = (quota: SubjectQuota) => new MemoryService({ db, embedder: gatedEmbedder('m', 1).embedder, nearDuplicateThreshold: 0.99, quota });

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: 3 });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const texts = (subject: string) =>
    db.withSubject(subject, 'reading', async (trx) => (await sql<{ text: string }>`select text from memories order by id`.execute(trx)).rows.map((row) => row.text));
  const quotaError = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isServiceError(error) ? error.code : error).toBe('QUOTA_EXCEEDED');
    return (error as Error).message;
  };

  it('remember stops at the number of memories, stores nothing past it, and has room again after a forget', async () => {
    const memory = service({ memories: 3, textBytes: 0 });
    const ids = [];
    for (const text of ['One fact.', 'Two facts.', 'Three facts.']) ids.push((await memory.remember('count', newMemory(text), 'insert')).memoryId);
    const message = await quotaError(memory.remember('count', newMemory('Four facts.'), 'skip_if_near'));
    expect(message).toContain('you keep 3 memories');
    expect(message).toContain('MaxMemoriesPerSubject');
    expect(await texts('count')).toEqual(['One fact.', 'Two facts.', 'Three facts.']);
    await memory.forget('count', ids[0]!, undefined);
    await memory.remember('count', newMemory('Four facts.'), 'insert');
    expect(await memory.usage('count')).toEqual({ used: { memories: 3, textBytes: 'Two facts.Three facts.Four facts.'.length }, quota: { memories: 3, textBytes: 0 } });
  });

  it('remember and correct stop at the bytes of text, counted in UTF-8', async () => {
    const memory = service({ memories: 0, textBytes: 40 });
    // 12 characters, 24 bytes.
    const { memoryId } = await memory.remember('bytes', newMemory('éééééééééééé'), 'insert');
    expect(await quotaError(memory.remember('bytes', newMemory('Seventeen bytes!!'), 'insert'))).toContain('MaxBytesPerSubject');
    await memory.remember('bytes', newMemory('Sixteen bytes!!!'), 'insert');
    // A correction needs room only for what it adds: the corrected text no longer counts.
    const correction = { tags: undefined, importance: undefined, sourceProvider: undefined, captureMode: undefined, sessionId: undefined, expiresAt: undefined, note: undefined };
    await quotaError(memory.correct('bytes', memoryId, { ...correction, text: 'A correction of twenty-five.' }));
    expect(await texts('bytes')).toEqual(['éééééééééééé', 'Sixteen bytes!!!']);
    await memory.correct('bytes', memoryId, { ...correction, text: 'Twenty-four bytes, fits.' });
    expect((await memory.usage('bytes')).used).toEqual({ memories: 2, textBytes: 40 });
  });

  it('import stores what fits, stops at the quota saying so, and keeps what it stored', async () => {
    const memory = service({ memories: 5, textBytes: 0 });
    const lines = [{ format: EXPORT_FORMAT, version: EXPORT_VERSION }, ...Array.from({ length: 9 }, (_, i) => ({ type: 'memory', text: `Imported fact ${i}.`, tags: [], importance: 0.5 }))];
    const summary = await importFile(memory, 'import', [Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'))], { maxTextChars: 1000, batchSize: 2 });
    expect(summary).toMatchObject({ memoriesImported: 5, duplicatesSkipped: 0, stoppedBy: { code: 'QUOTA_EXCEEDED' } });
    expect(summary.stoppedBy?.message).toContain('you keep 5 memories');
    expect(await texts('import')).toEqual([0, 1, 2, 3, 4].map((i) => `Imported fact ${i}.`));
  });

  it('subject_stats keeps the bytes of every subject’s texts through inserts, corrections and deletes', async () => {
    const rows = await db.withAllSubjects('checking', (trx) => sql.raw<{ n: number }>(subjectCountMismatchesSql(db.schema)).execute(trx));
    expect(rows.rows[0]?.n).toBe(0);
    await db.withSubject('bytes', 'erasing', (trx) => sql`delete from memories`.execute(trx));
    expect((await service({ memories: 0, textBytes: 0 }).usage('bytes')).used).toEqual({ memories: 0, textBytes: 0 });
  });
});
