import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { insertMemory } from '../../src/db/memories/memories.js';
import { subjectSize } from '../../src/db/memories/subject-stats.js';
import { vectorRanking } from '../../src/db/memories/vector-ranking.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector, type MemoryVectors } from '../../src/db/pgvector.js';
import { newMemory } from '../helpers/memories.js';
import { engines } from '../helpers/engines.js';
import { walkedAlongside } from '../helpers/index-walk.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Recall reads each of its first memories with the turn stored right after it in the same conversation (session_id): a
 * reply that shares nothing with a question about what it answers ("A lake at sunrise" for "What did Caroline
 * paint?") is found by the question it answers, when that pair is nearer than the reply alone by a margin. The
 * vectors are chosen so that the margin and the pairing decide the order.
 */
const DIMS = 4;
const MODEL = 'context-test';
const unit = (values: number[]) => {
  const norm = Math.hypot(...values);
  return storedVector(values.map((value) => value / norm), MODEL);
};
const whole = (values: number[]): MemoryVectors => ({ whole: unit(values), passages: [] });

const question = unit([1, 0, 0, 0]);
/** The turn that asks: near the question (distance 0.1). */
const asking = whole([0.9, 0.436, 0, 0]);
/** The reply: far from the question alone (distance 1), at distance 0.364 read with the turn that asks. */
const reply = whole([0, 0, 1, 0]);
/** Something else, at distance 0.5: between the reply read with the turn before it and the reply alone. */
const other = whole([0.5, 0, 0, 0.866]);

describe.each(engines)('a turn read with the one before it on %s', (engine) => {
  let db: DatabaseHandle;
  const ids: Record<string, number> = {};
  const conversation = 'context-conversation';
  const interleaved = 'context-interleaved';
  const alone = 'context-alone';

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
    await db.withSubject(conversation, 'inserting', async (trx) => {
      ids.asking = await insertMemory(trx, conversation, { ...newMemory('Melanie: What did you paint?'), sessionId: 's1' }, asking);
      ids.reply = await insertMemory(trx, conversation, { ...newMemory('Caroline: A lake at sunrise.'), sessionId: 's1' }, reply);
      ids.other = await insertMemory(trx, conversation, newMemory('Something else.'), other);
    });
    // The same texts, but another conversation's turn was stored between the question and its reply.
    await db.withSubject(interleaved, 'inserting', async (trx) => {
      ids.interleavedAsking = await insertMemory(trx, interleaved, { ...newMemory('Melanie: What did you paint?'), sessionId: 's1' }, asking);
      ids.interleavedBetween = await insertMemory(trx, interleaved, { ...newMemory('Jon: Off to the gym.'), sessionId: 's2' }, whole([0, 0, 0, 1]));
      ids.interleavedReply = await insertMemory(trx, interleaved, { ...newMemory('Caroline: A lake at sunrise.'), sessionId: 's1' }, reply);
      ids.interleavedOther = await insertMemory(trx, interleaved, newMemory('Something else.'), other);
    });
    // Outside any conversation, the order of storing says nothing.
    await db.withSubject(alone, 'inserting', async (trx) => {
      ids.aloneAsking = await insertMemory(trx, alone, newMemory('What did you paint?'), asking);
      ids.aloneReply = await insertMemory(trx, alone, newMemory('A lake at sunrise.'), reply);
      ids.aloneOther = await insertMemory(trx, alone, newMemory('Something else.'), other);
    });
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const rank = (subject: string, recall: boolean, exactScanLimit: number) =>
    db.withSubject(subject, 'ranking', async (trx) => {
      const size = await subjectSize(trx, subject);
      return vectorRanking(trx, subject, NO_FILTERS, question, size.memories, { exactScanLimit, size, recall });
    });

  it('ranks a reply by the turn it answers on the exact scan and on the index walk', async () => {
    const exact = await rank(conversation, true, 5000);
    expect(exact.plan).toBe('exact');
    expect(exact.ids).toEqual([ids.asking, ids.reply, ids.other]);
    // An exact-scan limit of 0 sends this small subject down the index path, as a large one goes.
    const walked = await rank(conversation, true, 0);
    expect(walked.plan).toBe('hnsw');
    expect(walked.ids).toEqual([ids.asking, ids.reply, ids.other]);
    // As recall walks a large subject's index, with another statement alongside.
    expect(await walkedAlongside(db, conversation, question, 3)).toEqual([ids.asking, ids.reply, ids.other]);
  });

  it('leaves remember’s near-duplicates, which judge whole texts, to the reply alone', async () => {
    expect((await rank(conversation, false, 5000)).ids).toEqual([ids.asking, ids.other, ids.reply]);
  });

  it('reads a turn with its own conversation’s turn before it, past another conversation’s, and a memory in no conversation alone', async () => {
    expect((await rank(interleaved, true, 5000)).ids).toEqual([ids.interleavedAsking, ids.interleavedReply, ids.interleavedOther, ids.interleavedBetween]);
    expect((await rank(interleaved, true, 0)).ids).toEqual([ids.interleavedAsking, ids.interleavedReply, ids.interleavedOther, ids.interleavedBetween]);
    expect((await rank(alone, true, 5000)).ids).toEqual([ids.aloneAsking, ids.aloneOther, ids.aloneReply]);
  });

  it('counts the pair only when it is nearer than the turn alone by the margin', async () => {
    // At distance 0.38, "Nearer" is farther than the pair (0.364) and nearer than the pair with the margin (0.394).
    const subject = 'context-margin';
    const margin: Record<string, number> = {};
    await db.withSubject(subject, 'inserting', async (trx) => {
      margin.asking = await insertMemory(trx, subject, { ...newMemory('Melanie: What did you paint?'), sessionId: 's1' }, asking);
      margin.reply = await insertMemory(trx, subject, { ...newMemory('Caroline: A lake at sunrise.'), sessionId: 's1' }, reply);
      margin.near = await insertMemory(trx, subject, newMemory('Nearer.'), whole([0.62, 0, 0, 0.7846]));
    });
    expect((await rank(subject, true, 5000)).ids).toEqual([margin.asking, margin.near, margin.reply]);
  });
});
