import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRestatement } from '../../src/db/memories/restatements.js';
import { storedVector } from '../../src/db/pgvector.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { exportLines } from '../../src/transfer/export-format.js';
import { importFile } from '../../src/transfer/import-file.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let subjectCounter = 0;
const newSubject = () => `restating-${Date.now()}-${subjectCounter++}`;

const STORED = 'The user is allergic to penicillin';
const RESTATED = 'User is allergic to penicillin.';

/**
 * A text remember (skip_if_near) judges to state a stored fact is kept verbatim as a restatement of that memory,
 * and every surface carries it: list_memories, forget and correct (the tombstone keeps it), export and import,
 * erasing everything, and making it a memory of its own.
 */
describe.each(engines)('restatements on %s', (engine) => {
  let server: TestServer;
  let service: MemoryService;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    service = new MemoryService({ db: server.service.db, embedder: server.service.embedder, nearDuplicateThreshold: server.config.memory.nearDuplicateThreshold });
  });
  afterAll(async () => {
    await server.close();
  });

  const call = async (subject: string, tool: string, args: Record<string, unknown>) => server.call(await server.token(subject), tool, args);

  const restatementRows = (subject: string) =>
    server.service.db.withSubject(subject, 'inspecting rows', async (trx) =>
      (
        await sql<{ memory_id: number; subject: string; text: string; tags: string[]; source_provider: string | null; capture_mode: string | null; session_id: string | null; embedding_model: string; embedding_dimensions: number }>`
          select memory_id::int as memory_id, subject, text, tags, source_provider, capture_mode, session_id, embedding_model, embedding_dimensions
            from memory_restatements order by id`.execute(trx)
      ).rows,
    );

  async function restated(subject: string) {
    const first = await call(subject, 'remember', { text: STORED, tags: ['health'] });
    const again = await call(subject, 'remember', {
      text: RESTATED,
      tags: ['Allergies'],
      source_provider: 'claude',
      capture_mode: 'explicit',
      session_id: 'chat-9',
      dedup_policy: 'skip_if_near',
    });
    return { memoryId: first.structured.memory_id as number, again };
  }

  it('keeps the text verbatim with every field, confirms the memory, and says what it was matched to', async () => {
    const subject = newSubject();
    const before = new Date();
    const { memoryId, again } = await restated(subject);
    expect(again.structured).toMatchObject({ ok: true, memory_id: memoryId, message: 'Already remembered', matched_text: STORED });
    expect(await restatementRows(subject)).toEqual([
      {
        memory_id: memoryId,
        subject,
        text: RESTATED,
        tags: ['allergies'],
        source_provider: 'claude',
        capture_mode: 'explicit',
        session_id: 'chat-9',
        embedding_model: 'local:universal-sentence-encoder-lite',
        embedding_dimensions: 512,
      },
    ]);
    const memory = await service.get(subject, memoryId);
    expect(memory.lastConfirmedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    // The same text again adds nothing: it is stored verbatim already.
    await call(subject, 'remember', { text: RESTATED, dedup_policy: 'skip_if_near' });
    await call(subject, 'remember', { text: STORED, dedup_policy: 'skip_if_near' });
    expect(await restatementRows(subject)).toHaveLength(1);
  });

  it('is invisible to every other subject (row-level security)', async () => {
    const subject = newSubject();
    await restated(subject);
    expect(await restatementRows(subject)).toHaveLength(1);
    expect(await restatementRows(newSubject())).toEqual([]);
    const listed = await call(newSubject(), 'list_memories', {});
    expect(listed.structured.memories).toEqual([]);
  });

  it('is searched by recall, by its words and its vector: its memory comes first, once, showing what matched', async () => {
    const subject = newSubject();
    const ids: number[] = [];
    for (const text of ["The user's cat is called Miso", "The user's dog is called Rex", "The user's parrot is called Kiwi", "The user's horse is called Juniper"]) {
      ids.push((await call(subject, 'remember', { text, dedup_policy: 'insert' })).structured.memory_id as number);
    }
    // Stored as remember would, whatever the same-fact decision makes of these words.
    const restatement = 'Zorblax, the ginger tabby, answers to Miso';
    const [values] = await server.service.embedder.embed([restatement]);
    await server.service.db.withSubject(subject, 'restating', (trx) =>
      insertRestatement(trx, subject, ids[0]!, { text: restatement, tags: [], sourceProvider: undefined, captureMode: undefined, sessionId: undefined }, storedVector(values!, server.service.embedder.model)),
    );
    for (const query of ['Zorblax', 'ginger tabby']) {
      const recalled = await call(subject, 'recall', { query, limit: 4 });
      const memories = recalled.structured.memories as { memory_id: number; matched_restatements?: { text: string; created_at: string }[] }[];
      expect(memories[0]).toMatchObject({ memory_id: ids[0], matched_restatements: [{ text: restatement, created_at: expect.any(String) }] });
      expect(new Set(memories.map((memory) => memory.memory_id)).size).toBe(memories.length);
      expect(memories.slice(1).every((memory) => memory.matched_restatements === undefined)).toBe(true);
    }
    // A filter its memory fails leaves the restatement out too.
    const filtered = await call(subject, 'recall', { query: 'Zorblax', tags: ['nothing-tagged-so'] });
    expect(filtered.structured.memories).toEqual([]);
  });

  it('is listed under its memory by list_memories', async () => {
    const subject = newSubject();
    const { memoryId } = await restated(subject);
    const listed = await call(subject, 'list_memories', {});
    expect(listed.isError).toBe(false);
    expect(listed.structured.memories).toEqual([
      expect.objectContaining({
        memory_id: memoryId,
        text: STORED,
        restatements: [
          {
            restatement_id: expect.any(Number),
            text: RESTATED,
            tags: ['allergies'],
            capture_mode: 'explicit',
            source_provider: 'claude',
            session_id: 'chat-9',
            created_at: expect.stringMatching(/^\d{4}-/),
          },
        ],
      }),
    ]);
  });

  it('counts restatements in list_memories\' max_chars, with their memory', async () => {
    const subject = newSubject();
    // 150 characters, and a restatement of it (147): together 297.
    const note = 'The user keeps the spare keys to the allotment shed, the bike lock and the loft hatch in the green tin on the hall shelf, behind the bird book, always';
    const again = `${note.replace(/^The user/, 'User')}.`;
    expect([note.length, again.length]).toEqual([150, 147]);
    const memoryId = (await call(subject, 'remember', { text: note })).structured.memory_id;
    expect((await call(subject, 'remember', { text: again, dedup_policy: 'skip_if_near' })).structured.message).toBe('Already remembered');
    const cello = 'The user plays the cello on Sundays with a quartet from the village hall; they rehearse at four.';
    const newer = (await call(subject, 'remember', { text: cello, dedup_policy: 'insert' })).structured.memory_id;
    const listedIds = (answer: { structured: Record<string, unknown> }) => (answer.structured.memories as { memory_id: number }[]).map((memory) => memory.memory_id);
    // Newest first: the cello, then the note with its restatement.
    const whole = await call(subject, 'list_memories', { max_chars: cello.length + 297 });
    expect(listedIds(whole)).toEqual([newer, memoryId]);
    // One character less and the note with its restatement does not fit: the page ends before it.
    const cut = await call(subject, 'list_memories', { max_chars: cello.length + 296 });
    expect(listedIds(cut)).toEqual([newer]);
    expect(cut.structured.next_cursor).toEqual(expect.any(String));
    // A first memory over the budget: its text whole when it fits, with the restatements that fit beside it.
    await call(subject, 'forget', { memory_id: newer });
    const first = await call(subject, 'list_memories', { max_chars: 296 });
    expect(first.structured.memories).toEqual([expect.objectContaining({ memory_id: memoryId, text: note, restatements: [] })]);
    expect((first.structured.memories as Record<string, unknown>[])[0]!.text_truncated).toBeUndefined();
    const roomy = await call(subject, 'list_memories', { max_chars: 297 });
    expect((roomy.structured.memories as { restatements: { text: string }[] }[])[0]!.restatements.map((restatement) => restatement.text)).toEqual([again]);
  });

  it.each(['forget', 'correct'] as const)('goes with its memory on %s, and the tombstone keeps it', async (tool) => {
    const subject = newSubject();
    const { memoryId } = await restated(subject);
    const result = await call(subject, tool, tool === 'forget' ? { memory_id: memoryId } : { memory_id: memoryId, text: 'The user is allergic to amoxicillin' });
    expect(result.isError).toBe(false);
    expect(await restatementRows(subject)).toEqual([]);
    const { tombstones } = await service.tombstones(subject, { after: undefined, limit: 10 });
    expect(tombstones).toEqual([
      expect.objectContaining({
        memoryId,
        text: STORED,
        restatements: [{ text: RESTATED, tags: ['allergies'], sourceProvider: 'claude', captureMode: 'explicit', sessionId: 'chat-9', createdAt: expect.any(Date) }],
      }),
    ]);
  });

  /** The subject's export as parsed lines. */
  async function exported(subject: string): Promise<Record<string, unknown>[]> {
    let text = '';
    for await (const line of exportLines(service.exportRecords(subject))) text += line;
    return text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  const importText = (subject: string, text: string) => importFile(service, subject, [Buffer.from(text)], { maxTextChars: 16_000, batchSize: 50 });

  it('is exported with its memory and its tombstone (format 2), and an import restores both', async () => {
    const subject = newSubject();
    const { memoryId } = await restated(subject);
    const other = await call(subject, 'remember', { text: 'The user lives in Lyon', tags: ['home'] });
    await call(subject, 'remember', { text: 'User lives in Lyon.', dedup_policy: 'skip_if_near' });
    await call(subject, 'forget', { memory_id: other.structured.memory_id });
    const lines = await exported(subject);
    expect(lines[0]).toMatchObject({ format: 'memory-service-export', version: 2 });
    const restatement = { text: RESTATED, tags: ['allergies'], source_provider: 'claude', capture_mode: 'explicit', session_id: 'chat-9', created_at: expect.any(String) };
    expect(lines.find((line) => line.type === 'memory')).toMatchObject({ memory_id: memoryId, text: STORED, restatements: [restatement] });
    expect(lines.find((line) => line.type === 'tombstone')).toMatchObject({ text: 'The user lives in Lyon', restatements: [expect.objectContaining({ text: 'User lives in Lyon.' })] });

    const copy = newSubject();
    const text = lines.map((line) => JSON.stringify(line)).join('\n');
    expect(await importText(copy, text)).toMatchObject({ memoriesImported: 1, tombstonesImported: 1, refused: 0 });
    const copied = await exported(copy);
    const strip = (line: Record<string, unknown>) => ({ ...line, memory_id: 0, replaced_by: null, updated_at: null });
    expect(copied.slice(1).map(strip)).toEqual(lines.slice(1).map(strip));
    expect((await restatementRows(copy)).map((row) => [row.text, row.embedding_dimensions])).toEqual([[RESTATED, 512]]);
    // The copy's restatement is searchable: recall finds its memory by it.
    const recalled = await call(copy, 'recall', { query: RESTATED, limit: 3 });
    expect((recalled.structured.memories as { text: string }[]).map((memory) => memory.text)).toContain(STORED);
  });

  it('keeps the file\'s restatements of a memory already stored (skipped as a duplicate), once, however often it is imported', async () => {
    const source = newSubject();
    await restated(source);
    const lines = await exported(source);
    const text = lines.map((line) => JSON.stringify(line)).join('\n');
    // The copy already has the memory (same text and tags), but not the restatement.
    const copy = newSubject();
    await call(copy, 'remember', { text: STORED, tags: ['health'] });
    expect(await restatementRows(copy)).toEqual([]);
    expect(await importText(copy, text)).toMatchObject({ memoriesImported: 0, duplicatesSkipped: 1, refused: 0 });
    expect((await restatementRows(copy)).map((row) => [row.text, row.tags, row.embedding_dimensions])).toEqual([[RESTATED, ['allergies'], 512]]);
    // A second import adds nothing more.
    expect(await importText(copy, text)).toMatchObject({ memoriesImported: 0, duplicatesSkipped: 1 });
    expect((await restatementRows(copy)).map((row) => row.text)).toEqual([RESTATED]);
  });

  it('imports an export of format 1, written before restatements existed', async () => {
    const subject = newSubject();
    const version1 = [
      { format: 'memory-service-export', version: 1, exported_at: '2026-01-02T03:04:05.000Z' },
      {
        type: 'memory', memory_id: 7, text: 'The user keeps bees', tags: ['garden'], importance: 0.5, capture_mode: null, source_provider: null, session_id: null,
        created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_confirmed_at: '2026-01-01T00:00:00.000Z', expires_at: null,
        embedding_model: 'local:universal-sentence-encoder-lite',
      },
      {
        type: 'tombstone', memory_id: 5, text: 'The user keeps wasps', tags: [], reason: 'corrected', replaced_by: 7, note: null,
        memory_created_at: '2025-12-01T00:00:00.000Z', tombstoned_at: '2026-01-01T00:00:00.000Z', embedding_model: 'local:universal-sentence-encoder-lite',
      },
    ];
    const summary = await importText(subject, version1.map((line) => JSON.stringify(line)).join('\n'));
    expect(summary).toMatchObject({ memoriesImported: 1, tombstonesImported: 1, refused: 0, stoppedBy: undefined });
    const lines = await exported(subject);
    expect(lines.slice(1).map((line) => [line.type, line.text, line.restatements])).toEqual([
      ['memory', 'The user keeps bees', []],
      ['tombstone', 'The user keeps wasps', []],
    ]);
  });

  it('refuses a file of a format version it does not know, and a restatement holding a secret, storing nothing of either', async () => {
    const subject = newSubject();
    const unknown = await importText(subject, JSON.stringify({ format: 'memory-service-export', version: 3, exported_at: '2026-01-01T00:00:00Z' }));
    expect(unknown.stoppedBy).toEqual({ code: 'INVALID_INPUT', message: expect.stringMatching(/reads versions 1 and 2\)$/) });
    const line = {
      type: 'memory', text: 'The user keeps bees', tags: [],
      restatements: [{ text: 'The user keeps bees; api key sk-proj-4fT9xQ2mLp8RvW3nZk7YbC1dHs6JuE0a', tags: [], created_at: '2026-01-01T00:00:00.000Z' }],
    };
    const summary = await importText(subject, JSON.stringify(line));
    expect(summary).toMatchObject({ memoriesImported: 0, refused: 1 });
    expect(JSON.stringify(summary)).not.toContain('sk-proj');
    expect(await restatementRows(subject)).toEqual([]);
  });

  it('is erased with everything else of the subject', async () => {
    const subject = newSubject();
    await restated(subject);
    const erased = await service.eraseEverything(subject);
    expect(erased).toMatchObject({ memories: 1, restatements: 1 });
    expect(await restatementRows(subject)).toEqual([]);
  });

  it('becomes a memory of its own, with its fields, and leaves its former memory; only once', async () => {
    const subject = newSubject();
    const { memoryId } = await restated(subject);
    const listed = await call(subject, 'list_memories', {});
    const [memory] = listed.structured.memories as { restatements: { restatement_id: number }[] }[];
    const restatementId = memory!.restatements[0]!.restatement_id;
    expect(await service.separateRestatement(newSubject(), restatementId).catch((error: unknown) => (error as { code: string }).code)).toBe('NOT_FOUND');
    const separated = await service.separateRestatement(subject, restatementId);
    expect(separated.formerMemoryId).toBe(memoryId);
    expect(await restatementRows(subject)).toEqual([]);
    const own = await service.get(subject, separated.memoryId);
    expect(own).toMatchObject({ text: RESTATED, tags: ['allergies'], sourceProvider: 'claude', captureMode: 'explicit', sessionId: 'chat-9' });
    expect((await service.get(subject, memoryId)).text).toBe(STORED);
    await expect(service.separateRestatement(subject, restatementId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
