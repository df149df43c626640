import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/memory/memory-service.js';
import type { ExportRecord } from '../../src/memory/types.js';
import { exportLines } from '../../src/transfer/export-format.js';
import { importFile } from '../../src/transfer/import-file.js';
import { SpaceService, SUBJECTS_AS_NAMES } from '../../src/spaces/space-service.js';
import { resolveSpace, type AccessibleSpace } from '../../src/spaces/spaces.js';
import { insertMemory } from '../../src/db/memories/memories.js';
import { lockSubjectForWrite } from '../../src/db/memories/write-lock.js';
import { removeMember } from '../../src/db/spaces.js';
import { storedVector } from '../../src/db/pgvector.js';
import { newMemory } from '../helpers/memories.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const stamp = Date.now().toString(36);
const OWNER = `olivia-${stamp}`;
const WRITER = `walter-${stamp}`;
const READER = `rita-${stamp}`;
const OUTSIDER = `nora-${stamp}`;
type Role = 'owner' | 'writer' | 'reader' | 'outsider';
const ROLES: readonly Role[] = ['owner', 'writer', 'reader', 'outsider'];
const SUBJECT_OF: Record<Role, string> = { owner: OWNER, writer: WRITER, reader: READER, outsider: OUTSIDER };

interface Answer {
  isError: boolean;
  structured: Record<string, unknown>;
}
interface Recalled {
  memory_id: number;
  text: string;
  space: { id: string; name: string };
}
const codeOf = (answer: Answer) => (answer.structured.error as { code?: string } | undefined)?.code;
const memoriesOf = (answer: Answer) => answer.structured.memories as Recalled[];

/**
 * Spaces over real HTTP /mcp with real tokens of the built-in authorization server, on both engines: the owner,
 * a writer, a reader and a non-member of one shared space against every tool; recall over several spaces;
 * forged space ids, names, cursors and memory ids; near-duplicates within one space; a member removed while
 * writing; export and import per space; a space deleted with everything in it.
 */
describe.each(engines)('spaces over /mcp on %s', { timeout: 120_000 }, (engine) => {
  let server: TestServer;
  let spaces: SpaceService;
  let memory: MemoryService;
  let household: AccessibleSpace;
  /** The outsider's own space, which no one else is in. */
  let private_: AccessibleSpace;
  const tokens = {} as Record<Role, string>;
  let householdFact: number;
  let personalFact: number;
  let outsiderFact: number;

  const call = (role: Role, tool: string, args: Record<string, unknown>) => server.call(tokens[role], tool, args);
  /** Rows under `key` in every space-keyed table, read past row-level security. */
  const rowsUnder = (key: string) =>
    server.service.db.withAllSubjects('inspecting rows', async (trx) => {
      const counts: Record<string, number> = {};
      for (const table of ['memories', 'tombstones', 'memory_restatements', 'memory_terms', 'memory_recalls', 'subject_stats']) {
        const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where subject = ${key}`.execute(trx);
        counts[table] = Number(rows[0]!.n);
      }
      return counts;
    });
  const textsIn = (key: string) =>
    server.service.db.withAllSubjects('inspecting rows', async (trx) =>
      (await sql<{ text: string }>`select text from memories where subject = ${key} order by id`.execute(trx)).rows.map((row) => row.text),
    );
  const remember = async (role: Role, text: string, space?: string, extra: Record<string, unknown> = {}) => {
    const answer = await call(role, 'remember', { text, ...(space === undefined ? {} : { space }), ...extra });
    expect(answer.isError, JSON.stringify(answer.structured)).toBe(false);
    return answer.structured.memory_id as number;
  };

  beforeAll(async () => {
    server = await startTestServer({ engine });
    for (const role of ROLES) tokens[role] = await server.token(SUBJECT_OF[role]);
    // The page (another branch) manages spaces; here the domain service does it, over the same database.
    spaces = new SpaceService(server.service.db, SUBJECTS_AS_NAMES);
    memory = new MemoryService({ db: server.service.db, embedder: server.service.embedder, nearDuplicateThreshold: server.config.memory.nearDuplicateThreshold });
    household = await spaces.create(OWNER, 'Household');
    await spaces.share(OWNER, household.id, WRITER, 'writer');
    await spaces.share(OWNER, household.id, READER, 'reader');
    private_ = await spaces.create(OUTSIDER, 'Nora private');
    householdFact = await remember('owner', 'The boiler is serviced every October by Hansen Heating', household.id);
    personalFact = await remember('owner', 'Olivia keeps her passport in the blue drawer');
    outsiderFact = await remember('outsider', 'The garden shed key hangs behind the kitchen door', private_.id);
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists each person\'s spaces with their role, and none they are not in', async () => {
    const listed = async (role: Role) => (await call(role, 'spaces', {})).structured.spaces as { id: string; name: string; role: string; personal: boolean }[];
    expect(await listed('owner')).toEqual([
      { id: 'personal', name: 'Personal', role: 'owner', personal: true },
      { id: household.id, name: 'Household', role: 'owner', personal: false },
    ]);
    expect((await listed('writer')).map((space) => [space.id, space.role])).toEqual([['personal', 'owner'], [household.id, 'writer']]);
    expect((await listed('reader')).map((space) => [space.id, space.role])).toEqual([['personal', 'owner'], [household.id, 'reader']]);
    expect((await listed('outsider')).map((space) => [space.id, space.role])).toEqual([['personal', 'owner'], [private_.id, 'owner']]);
  });

  it('answers every tool in a shared space by role: owner and writer change it, a reader reads it, a non-member finds nothing', async () => {
    const expected = (role: Role, write: boolean) => (role === 'outsider' ? 'NOT_FOUND' : write && role === 'reader' ? 'FORBIDDEN' : undefined);
    const space = { id: household.id, name: 'Household' };
    for (const role of ROLES) {
      // Each role's own targets, so that one role's correct or forget leaves the next role's intact.
      const targets = [];
      for (const verb of ['corrected', 'forgotten', 'confirmed']) targets.push(await remember('owner', `The ${verb} fact number ${role} of the household`, household.id, { dedup_policy: 'insert' }));
      const [toCorrect, toForget, toConfirm] = targets as [number, number, number];
      const before = await textsIn(household.key);
      const attempts: [string, Record<string, unknown>, boolean][] = [
        ['remember', { text: `A household fact told by the ${role}`, space: household.id, dedup_policy: 'insert' }, true],
        ['recall', { query: 'When is the boiler serviced?', space: household.id }, false],
        ['list_memories', { space: household.id, limit: 100 }, false],
        ['brief', { space: household.id }, false],
        ['correct', { memory_id: toCorrect, text: `The corrected fact, put right by the ${role}` }, true],
        ['forget', { memory_id: toForget }, true],
        ['confirm', { memory_id: toConfirm }, true],
      ];
      for (const [tool, args, write] of attempts) {
        const answer = await call(role, tool, args);
        const code = expected(role, write);
        if (code !== undefined) {
          expect(codeOf(answer), `${role} ${tool}: ${JSON.stringify(answer.structured)}`).toBe(code);
          // Nothing of the space is in a refusal.
          expect(JSON.stringify(answer.structured), `${role} ${tool}`).not.toMatch(/boiler|Hansen|household fact/i);
          continue;
        }
        expect(answer.isError, `${role} ${tool}: ${JSON.stringify(answer.structured)}`).toBe(false);
        if (tool === 'recall' || tool === 'list_memories') {
          const found = memoriesOf(answer);
          expect(found.map((memory) => memory.memory_id), `${role} ${tool}`).toContain(householdFact);
          for (const memory of found) expect(memory.space, `${role} ${tool}`).toEqual(space);
        } else {
          expect(answer.structured.space, `${role} ${tool}`).toEqual(space);
        }
        if (tool === 'brief') expect(JSON.stringify(answer.structured)).toMatch(/boiler/);
      }
      const after = await textsIn(household.key);
      if (role === 'owner' || role === 'writer') {
        expect(after).toContain(`A household fact told by the ${role}`);
        expect(after).toContain(`The corrected fact, put right by the ${role}`);
        expect(after).not.toContain(`The forgotten fact number ${role} of the household`);
      } else {
        expect(after, role).toEqual(before);
      }
    }
  });

  it('recalls over several spaces at once, saying which space each result is in', async () => {
    const answer = await call('owner', 'recall', { query: 'Where are the passport and the boiler?', space: ['personal', 'Household'], limit: 20 });
    expect(answer.isError, JSON.stringify(answer.structured)).toBe(false);
    const found = memoriesOf(answer);
    const byId = new Map(found.map((memory) => [memory.memory_id, memory.space]));
    expect(byId.get(personalFact)).toEqual({ id: 'personal', name: 'Personal' });
    expect(byId.get(householdFact)).toEqual({ id: household.id, name: 'Household' });
    const personal = new Set((memoriesOf(await call('owner', 'list_memories', { limit: 100 }))).map((memory) => memory.memory_id));
    for (const memory of found) expect(memory.space.id === 'personal').toBe(personal.has(memory.memory_id));
    // The reader's recall over their personal space and the household sees the household, and nothing of Olivia's own.
    const reader = memoriesOf(await call('reader', 'recall', { query: 'passport boiler', space: ['personal', household.id], limit: 20 }));
    expect(reader.map((memory) => memory.memory_id)).toContain(householdFact);
    expect(reader.map((memory) => memory.memory_id)).not.toContain(personalFact);
  });

  it('answers forged space ids and another person\'s space, by id or name, with NOT_FOUND and shows nothing', async () => {
    const forged = [`space:${randomBytes(12).toString('hex')}`, private_.id, 'Nora private', 'nora PRIVATE', `${private_.id} `];
    const before = await textsIn(private_.key);
    for (const space of forged) {
      const attempts: [string, Record<string, unknown>][] = [
        ['remember', { text: 'Planted in someone else\'s space', space }],
        ['recall', { query: 'garden shed key', space }],
        ['recall', { query: 'garden shed key', space: ['personal', space] }],
        ['list_memories', { space }],
        ['brief', { space }],
        ['correct', { memory_id: outsiderFact, text: 'The key is under the mat', space }],
        ['forget', { memory_id: outsiderFact, space }],
        ['confirm', { memory_id: outsiderFact, space }],
        // Olivia's own memory named with another's space: not there, so not found either.
        ['confirm', { memory_id: personalFact, space }],
      ];
      for (const [tool, args] of attempts) {
        const answer = await call('owner', tool, args);
        expect(codeOf(answer), `${tool} ${space}: ${JSON.stringify(answer.structured)}`).toBe('NOT_FOUND');
        // The space's contents stay out of it (the message names only what was asked for).
        expect(JSON.stringify(answer.structured)).not.toMatch(/shed|kitchen/i);
      }
    }
    expect(await textsIn(private_.key)).toEqual(before);
  });

  it('answers memory ids of another space, or of a space not named, with NOT_FOUND', async () => {
    for (const [tool, extra] of [['correct', { text: 'The shed key is lost' }], ['forget', {}], ['confirm', {}]] as const) {
      for (const role of ['owner', 'writer', 'reader'] as const) {
        const answer = await call(role, tool, { memory_id: outsiderFact, ...extra });
        expect(answer.structured, `${role} ${tool}`).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: `memory ${outsiderFact} not found` } });
      }
      // The owner's household memory named with their personal space is not in it.
      const elsewhere = await call('owner', tool, { memory_id: householdFact, space: 'personal', ...extra });
      expect(codeOf(elsewhere), tool).toBe('NOT_FOUND');
      // And a personal memory is found only by its owner.
      const theirs = await call('writer', tool, { memory_id: personalFact, ...extra });
      expect(codeOf(theirs), tool).toBe('NOT_FOUND');
    }
    expect(await textsIn(private_.key)).toEqual(['The garden shed key hangs behind the kitchen door']);
    expect(await textsIn(OWNER)).toContain('Olivia keeps her passport in the blue drawer');
  });

  it('lists only the named space whatever cursor is given', async () => {
    const first = await call('owner', 'list_memories', { space: household.id, limit: 1 });
    const cursor = first.structured.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    for (const [role, space] of [['owner', 'personal'], ['outsider', 'personal'], ['outsider', private_.id], ['writer', 'personal']] as const) {
      const page = await call(role, 'list_memories', { space, cursor, limit: 100 });
      expect(page.isError, JSON.stringify(page.structured)).toBe(false);
      const own = new Set(memoriesOf(await call(role, 'list_memories', { space, limit: 100 })).map((memory) => memory.memory_id));
      for (const listed of memoriesOf(page)) {
        expect(own.has(listed.memory_id), `${role} ${space}: ${listed.text}`).toBe(true);
        expect(listed.space.id).toBe(space);
      }
    }
    // And a cursor of the outsider's space does not open the household to them.
    const theirs = (await call('outsider', 'list_memories', { space: private_.id, limit: 1 })).structured.next_cursor;
    const answer = await call('outsider', 'list_memories', { space: household.id, ...(typeof theirs === 'string' ? { cursor: theirs } : {}) });
    expect(codeOf(answer)).toBe('NOT_FOUND');
  });

  it('keeps near-duplicates, restatements and previously_corrected within one space', async () => {
    const fact = 'The family doctor is Dr. Amara Lindqvist at the Elm Street clinic';
    const personal = await remember('writer', fact);
    // The same text in the household is not "Already remembered", and lists no near-duplicate of the personal space.
    const shared = await call('writer', 'remember', { text: fact, space: household.id, dedup_policy: 'skip_if_near' });
    expect(shared.structured.message).toBe('Remembered');
    expect(shared.structured.memory_id).not.toBe(personal);
    const asked = await call('writer', 'remember', { text: 'Our family doctor is Dr. Amara Lindqvist, Elm Street clinic', space: household.id, dedup_policy: 'ask' });
    const near = (asked.structured.near_duplicates as { memory_id: number }[]).map((duplicate) => duplicate.memory_id);
    expect(near).toContain(shared.structured.memory_id);
    expect(near).not.toContain(personal);
    await call('writer', 'forget', { memory_id: asked.structured.memory_id as number });
    // Within the household it is: a restatement of the household's memory, kept in the household.
    const again = await call('writer', 'remember', { text: 'The family doctor is Dr Amara Lindqvist at the Elm Street clinic', space: household.id, dedup_policy: 'skip_if_near' });
    expect(again.structured.message).toBe('Already remembered');
    expect(again.structured.memory_id).toBe(shared.structured.memory_id);
    const restatements = await server.service.db.withAllSubjects('inspecting rows', async (trx) =>
      (await sql<{ subject: string; memory_id: string }>`select subject, memory_id from memory_restatements where text like '%Dr Amara Lindqvist%'`.execute(trx)).rows,
    );
    expect(restatements.map((row) => [row.subject, Number(row.memory_id)])).toEqual([[household.key, shared.structured.memory_id]]);
    // A correction in the personal space is previously_corrected there, not in the household.
    const old = 'The water meter is read on the first Monday of the month';
    const meter = await remember('writer', old);
    await call('writer', 'correct', { memory_id: meter, text: 'The water meter is read on the last Friday of the month' });
    const inHousehold = await call('writer', 'remember', { text: old, space: household.id, dedup_policy: 'insert' });
    expect(inHousehold.structured.previously_corrected).toBeUndefined();
    const inPersonal = await call('writer', 'remember', { text: old, dedup_policy: 'insert' });
    expect((inPersonal.structured.previously_corrected as { memory_id: number }[]).map((entry) => entry.memory_id)).toContain(meter);
  });

  it('ends a removed member\'s writes when the removal commits, and keeps every write acknowledged before', async () => {
    const member = `mika-${stamp}`;
    const token = await server.token(member);
    await spaces.share(OWNER, household.id, member, 'writer');
    const acknowledged: { text: string; startedAt: number }[] = [];
    const refusedAfter: { code: string | undefined; startedAt: number }[] = [];
    let removedAt = Infinity;
    let stop = false;
    // Three writes at a time, so that some are in flight when the removal commits.
    const writers = [0, 1, 2].map(async (lane) => {
      for (let i = 0; !stop; i++) {
        const text = `Mika's household note number ${lane}.${i} of ${stamp}`;
        const startedAt = performance.now();
        const answer = await server.call(token, 'remember', { text, space: household.id, dedup_policy: 'insert' });
        if (!answer.isError) acknowledged.push({ text, startedAt });
        else refusedAfter.push({ code: codeOf(answer), startedAt });
        if (refusedAfter.length >= 6) stop = true;
      }
    });
    while (acknowledged.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    await spaces.removeMember(OWNER, household.id, member);
    removedAt = performance.now();
    await Promise.all(writers);
    // No write that began after the removal committed was stored; every acknowledged write is there.
    expect(acknowledged.filter((write) => write.startedAt > removedAt)).toEqual([]);
    expect(refusedAfter.map((refusal) => refusal.code)).toEqual(Array(refusedAfter.length).fill('NOT_FOUND'));
    const stored = (await textsIn(household.key)).filter((text) => text.startsWith("Mika's household note"));
    expect(stored.sort()).toEqual(acknowledged.map((write) => write.text).sort());
    expect(codeOf(await server.call(token, 'recall', { query: 'household note', space: household.id }))).toBe('NOT_FOUND');
  });

  // Two connections at once, so PostgreSQL only: PGlite's one connection runs one transaction at a time.
  describe.runIf(engine === 'postgres')('a removal racing a write, step by step', () => {
    const vectors = () => ({ whole: storedVector(Array(server.service.embedder.dimensions).fill(0.1), server.service.embedder.model), passages: [] });
    /** Resolves once some transaction waits for an advisory lock (a space's write lock). */
    const someoneWaits = async () => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        const waiting = await server.service.db.withAllSubjects('inspecting locks', async (trx) =>
          Number((await sql<{ n: string }>`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`.execute(trx)).rows[0]!.n),
        );
        if (waiting > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('no transaction waited for a space\'s write lock within 10 s');
    };

    it('lets a write under way end first and keeps it; the removal then ends the member\'s writes', async () => {
      const member = `moss-${stamp}`;
      await spaces.share(OWNER, household.id, member, 'writer');
      const text = `Moss's note written as the door closed ${stamp}`;
      let removed = false;
      let removal: Promise<unknown> | undefined;
      await server.service.db.withSubject(member, 'storing the memory', async (trx) => {
        const space = await resolveSpace(trx, member, household.id, 'write');
        removal = spaces.removeMember(OWNER, household.id, member).then(() => (removed = true));
        await someoneWaits();
        expect(removed).toBe(false);
        await insertMemory(trx, space.key, newMemory(text), vectors());
      });
      await removal;
      expect(removed).toBe(true);
      expect(await textsIn(household.key)).toContain(text);
      const after = await server.call(await server.token(member), 'remember', { text: `${text}, again`, space: household.id });
      expect(codeOf(after)).toBe('NOT_FOUND');
    });

    it('refuses with NOT_FOUND, storing nothing, a write that found the member in the space before the removal committed', async () => {
      const member = `moth-${stamp}`;
      await spaces.share(OWNER, household.id, member, 'writer');
      const text = `Moth's note written as the door closed ${stamp}`;
      let write: Promise<unknown> | undefined;
      // The owner's removal holds the space's lock, uncommitted, while the member's write checks the space (still
      // a member: the removal is not committed) and then waits for the lock.
      await server.service.db.withSubject(OWNER, 'removing the member', async (trx) => {
        await lockSubjectForWrite(trx, household.key);
        expect(await removeMember(trx, household.key, member)).toBe(true);
        write = memory.remember(member, { ...newMemory(text) }, 'insert', household.id);
        write.catch(() => undefined);
        await someoneWaits();
      });
      await expect(write).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await textsIn(household.key)).not.toContain(text);
    });
  });

  it('exports one space and imports it into another, leaving the rest alone', async () => {
    const exported: ExportRecord[] = [];
    for await (const record of memory.exportRecords(OWNER, household.id)) exported.push(record);
    const texts = exported.flatMap((record) => (record.kind === 'memory' ? [record.memory.text] : []));
    expect(texts.sort()).toEqual((await textsIn(household.key)).sort());
    expect(exported.some((record) => record.kind === 'tombstone')).toBe(true);
    expect(texts).not.toContain('Olivia keeps her passport in the blue drawer');
    // A reader may export, not import; a non-member neither.
    const readerCopy: ExportRecord[] = [];
    for await (const record of memory.exportRecords(READER, 'Household')) readerCopy.push(record);
    expect(readerCopy.length).toBe(exported.length);
    await expect(drain(memory.exportRecords(OUTSIDER, household.id))).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const copy = await spaces.create(OWNER, 'Household copy');
    // The export's own lines, as the CLI and the page write and read them.
    const file = async () => {
      const lines: string[] = [];
      for await (const line of exportLines((async function* () { yield* exported; })())) lines.push(line);
      return [Buffer.from(lines.join(''))];
    };
    const into = async (caller: string, space: string) => importFile(memory, caller, await file(), { maxTextChars: server.config.memory.maxTextChars, batchSize: 16, space });
    await expect(into(READER, household.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(into(OUTSIDER, copy.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const personalBefore = await textsIn(OWNER);
    const summary = await into(OWNER, 'household COPY');
    expect(summary.memoriesImported).toBe(texts.length);
    expect(summary.tombstonesImported).toBe(exported.length - texts.length);
    expect((await textsIn(copy.key)).sort()).toEqual([...texts].sort());
    expect((await rowsUnder(copy.key)).tombstones).toBe(exported.length - texts.length);
    expect(await textsIn(OWNER)).toEqual(personalBefore);
  });

  it('deletes a space with its memories, restatements and tombstones, and its members lose it', async () => {
    const doomed = await spaces.create(OWNER, 'Doomed');
    await spaces.share(OWNER, doomed.id, WRITER, 'writer');
    const first = await remember('writer', 'The doomed space holds a fact about the attic ladder', doomed.id);
    await call('writer', 'remember', { text: 'The doomed space holds a fact about the attic ladder.', space: doomed.id, dedup_policy: 'skip_if_near' });
    await remember('owner', 'A second doomed fact about the cellar light', doomed.id);
    await call('owner', 'forget', { memory_id: first });
    await call('writer', 'recall', { query: 'cellar light', space: doomed.id });
    // The recall is counted just after its answer (RecallCounts): a row to delete too.
    await expect.poll(async () => (await rowsUnder(doomed.key)).memory_recalls).toBe(1);
    const before = await rowsUnder(doomed.key);
    expect(before.memories).toBe(1);
    expect(before.tombstones).toBe(1);
    await expect(spaces.delete(WRITER, doomed.id, 'Doomed')).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(spaces.delete(OWNER, doomed.id, 'Doom')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(await rowsUnder(doomed.key)).toEqual(before);
    await spaces.delete(OWNER, doomed.id, 'doomed');
    expect(await rowsUnder(doomed.key)).toEqual({ memories: 0, tombstones: 0, memory_restatements: 0, memory_terms: 0, memory_recalls: 0, subject_stats: 0 });
    const left = await server.service.db.withAllSubjects('inspecting rows', async (trx) => ({
      spaces: (await sql`select 1 from spaces where id = ${doomed.key}`.execute(trx)).rows.length,
      members: (await sql`select 1 from space_members where space_id = ${doomed.key}`.execute(trx)).rows.length,
    }));
    expect(left).toEqual({ spaces: 0, members: 0 });
    expect(codeOf(await call('writer', 'recall', { query: 'attic', space: doomed.id }))).toBe('NOT_FOUND');
    expect(codeOf(await call('owner', 'list_memories', { space: 'Doomed' }))).toBe('NOT_FOUND');
    // The household is untouched.
    expect(await textsIn(household.key)).toContain('The boiler is serviced every October by Hansen Heating');
  });
});

async function drain<T>(records: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const record of records) all.push(record);
  return all;
}
