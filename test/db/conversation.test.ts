import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continuationOf, continuationsQuery, SHORT_TURN_WORDS } from '../../src/db/memories/conversation.js';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { deleteMemory, insertMemory } from '../../src/db/memories/memories.js';
import type { NewMemory } from '../../src/db/memories/records.js';
import { subjectSize } from '../../src/db/memories/subject-stats.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector } from '../../src/db/pgvector.js';
import { engines } from '../helpers/engines.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/** The memory remembered next in the same conversation (session_id), which recall's continuation ranking nudges. */
const DIMS = 4;
const vectors = { whole: storedVector([1, 0, 0, 0], 'conversation-test'), passages: [] };
const spoken = (text: string, sessionId: string | undefined, extra: Partial<NewMemory> = {}): NewMemory => ({ ...newMemory(text), sessionId, ...extra });

describe.each(engines)('the next memory of a conversation on %s', (engine) => {
  let db: DatabaseHandle;
  const subject = 'conversation-subject';
  const other = 'conversation-other';
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
    // Two conversations interleaved, one memory outside any, and another subject's memory in between.
    const remember = (who: string, key: string, memory: NewMemory) =>
      db.withSubject(who, 'inserting', async (trx) => {
        ids[key] = await insertMemory(trx, who, memory, vectors);
      });
    await remember(subject, 'question', spoken('Melanie: What did you paint last week?', 'chat-1'));
    await remember(other, 'otherSubject', spoken('Someone else, same session id.', 'chat-1'));
    await remember(subject, 'elsewhere', spoken('Another chat altogether.', 'chat-2'));
    await remember(subject, 'loose', spoken('No conversation at all.', undefined));
    await remember(subject, 'answer', spoken('Caroline: A lake at sunrise.', 'chat-1', { tags: ['art'] }));
    await remember(subject, 'afterAnswer', spoken('Melanie: Lovely!', 'chat-1'));
    await remember(subject, 'expiredNext', spoken('Caroline: Which one?', 'chat-2', { expiresAt: new Date(Date.now() - 60_000) }));
    await remember(subject, 'afterExpired', spoken('Caroline: The blue one.', 'chat-2'));
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const said = (memoryId: number, filters = NO_FILTERS, who = subject) => db.withSubject(who, 'reading', (trx) => continuationOf(trx, who, memoryId, filters));
  const next = async (memoryId: number, filters = NO_FILTERS, who = subject) => (await said(memoryId, filters, who))?.next;

  it('finds what came next in the same conversation, skipping other conversations, loose memories and other subjects', async () => {
    expect(await next(ids.question!)).toBe(ids.answer);
    expect(await next(ids.answer!)).toBe(ids.afterAnswer);
  });

  it('reads past a short turn to the one after it, and not past a long one', async () => {
    // "Caroline: A lake at sunrise." says little: what Melanie said after it comes too.
    expect(await said(ids.question!)).toEqual({ next: ids.answer, after: ids.afterAnswer });
    // Nothing after "Melanie: Lovely!".
    expect(await said(ids.answer!)).toEqual({ next: ids.afterAnswer });
    const talk = 'conversation-long-turns';
    const turn = (text: string) => db.withSubject(talk, 'inserting', (trx) => insertMemory(trx, talk, spoken(text, 'chat-7'), vectors));
    const opening = await turn('Melanie: How was the trip?');
    const story = await turn(`Caroline: ${Array.from({ length: SHORT_TURN_WORDS }, (_, i) => `word${i}`).join(' ')}`);
    await turn('Melanie: Wow.');
    expect(await said(opening, NO_FILTERS, talk)).toEqual({ next: story });
  });

  it('reads past a short turn only to one the recall filters let through', async () => {
    // The answer is tagged "art"; what came after it is not.
    expect(await said(ids.question!, { ...NO_FILTERS, tags: ['art'] })).toEqual({ next: ids.answer });
  });

  it('has nothing after the last memory of a conversation, nor for a memory outside any', async () => {
    expect(await next(ids.afterAnswer!)).toBeUndefined();
    expect(await next(ids.loose!)).toBeUndefined();
  });

  it('steps over an expired memory to the live one after it', async () => {
    expect(await next(ids.elsewhere!)).toBe(ids.afterExpired);
  });

  it('leaves out a next memory the recall filters exclude', async () => {
    expect(await next(ids.question!, { ...NO_FILTERS, tags: ['art'] })).toBe(ids.answer);
    expect(await next(ids.question!, { ...NO_FILTERS, tags: ['cooking'] })).toBeUndefined();
  });

  it("never reaches another subject's memories, even with the same session id", async () => {
    expect(await next(ids.otherSubject!, NO_FILTERS, other)).toBeUndefined();
    // Asked about the other subject's memory as this subject: it is not this subject's to continue.
    expect(await next(ids.otherSubject!)).toBeUndefined();
  });

  it('looks for the turn after a conversation’s last one in one index probe, however many memories came after it', async () => {
    const long = 'conversation-long';
    const last = await db.withSubject(long, 'inserting', async (trx) => {
      const id = await insertMemory(trx, long, spoken('Melanie: Bye for now!', 'chat-5'), vectors);
      await sql`
        insert into memories (subject, text, embedding, embedding_model, embedding_dimensions, created_at)
        select subject, 'Loose fact ' || n, embedding, embedding_model, embedding_dimensions, created_at + n * interval '1 second'
          from memories, generate_series(1, 2000) as n
         where id = ${id}`.execute(trx);
      await sql`analyze memories`.execute(trx);
      return id;
    });
    expect(await next(last, NO_FILTERS, long)).toBeUndefined();
    const plan = await db.withSubject(long, 'inspecting rows', async (trx) => {
      const query = continuationsQuery(long, NO_FILTERS, sql`select ${last}::bigint as id`).compile(trx);
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `explain (analyze, costs off) ${query.sql}` });
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    // Through the subject's creation order alone, all 2000 later memories were read and filtered out.
    expect(plan).toMatch(/memories_subject_session_idx/);
    const removed = [...plan.matchAll(/Rows Removed by Filter: (\d+)/g)].map((match) => Number(match[1]));
    expect(Math.max(0, ...removed)).toBeLessThan(10);
  });

  it('counts the memories in conversations with the subject, so that recall skips the look-up for a subject with none', async () => {
    const counted = 'conversation-counted';
    const size = () => db.withSubject(counted, 'reading', (trx) => subjectSize(trx, counted));
    expect((await size()).inConversations).toBe(0);
    const inserted = await db.withSubject(counted, 'inserting', async (trx) => [
      await insertMemory(trx, counted, spoken('First turn.', 'chat-9'), vectors),
      await insertMemory(trx, counted, spoken('Second turn.', 'chat-9'), vectors),
      await insertMemory(trx, counted, spoken('A loose fact.', undefined), vectors),
    ]);
    expect(await size()).toMatchObject({ memories: 3, inConversations: 2 });
    await db.withSubject(counted, 'forgetting', (trx) => deleteMemory(trx, counted, inserted[0]!));
    expect(await size()).toMatchObject({ memories: 2, inConversations: 1 });
    // An operator's SQL that moves a memory out of its conversation, or a loose one into one, is counted too.
    await db.withSubject(counted, 'editing', (trx) => sql`update memories set session_id = null where id = ${inserted[1]!}`.execute(trx));
    expect(await size()).toMatchObject({ memories: 2, inConversations: 0 });
    await db.withSubject(counted, 'editing', (trx) => sql`update memories set session_id = 'chat-10' where id = ${inserted[2]!}`.execute(trx));
    expect(await size()).toMatchObject({ memories: 2, inConversations: 1 });
    // The other subjects' memories in conversations count for them alone.
    expect((await db.withSubject(subject, 'reading', (trx) => subjectSize(trx, subject))).inConversations).toBe(6);
  });
});
