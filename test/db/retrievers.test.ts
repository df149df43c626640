import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Continuation } from '../../src/db/memories/conversation.js';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { insertMemory } from '../../src/db/memories/memories.js';
import type { NewMemory } from '../../src/db/memories/records.js';
import { DEFAULT_EXACT_SCAN_LIMIT, gatherFirstEvidence, RANKING_DEPTH, type RecallQuestion } from '../../src/db/memories/recall-plan.js';
import { insertRestatement } from '../../src/db/memories/restatements.js';
import { restatementRanking } from '../../src/db/memories/restatement-ranking.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { storedVector } from '../../src/db/pgvector.js';
import type { DbTransaction } from '../../src/db/schema.js';
import { contentWords } from '../../src/memory/query-analysis.js';
import { BRIDGED_ANSWER_PLACE } from '../../src/memory/recall-coverage.js';
import { arrangeFirstResults } from '../../src/memory/arrange-results.js';
import { rankMemories } from '../../src/memory/recall-ranking.js';
import {
  bridgeRetriever,
  bridgeStatement,
  continuationRetriever,
  personRetriever,
  RETRIEVER_WEIGHTS,
  type FirstResultTexts,
  type RetrieverContext,
} from '../../src/memory/retrievers.js';
import { engines } from '../helpers/engines.js';
import { newMemory } from '../helpers/memories.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Recall's planner (gatherFirstEvidence) and the retrievers that read the database, each alone, on both engines:
 * what each finds, when it has nothing to say, and that none reaches another subject's memories.
 */
const DIMS = 4;
const MODEL = 'retrievers-test';
const vector = (...values: number[]) => storedVector(values, MODEL);
const at = (x: number, y: number) => vector(x, y, 0, 0);

describe.each(engines)('recall retrievers on %s', (engine) => {
  let db: DatabaseHandle;
  const subject = 'retrievers-subject';
  const other = 'retrievers-other';
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    db = await openTestDatabase(engine, { embeddingDimensions: DIMS });
    const remember = (who: string, key: string, memory: NewMemory, embedding = at(0, 1)) =>
      db.withSubject(who, 'inserting', async (trx) => {
        ids[key] = await insertMemory(trx, who, memory, { whole: embedding, passages: [] });
      });
    await remember(subject, 'son', newMemory("The user's son Theo is 9 and plays the violin."), at(1, 0));
    await remember(subject, 'teacher', newMemory("Theo's lessons are with Mr Bell on Saturdays."), at(0.2, 1));
    await remember(subject, 'wife', newMemory("The user's wife Ana is a nurse at St Mary's."), at(0.5, 0.5));
    await remember(subject, 'question', { ...newMemory('Melanie: What did you paint last week?'), sessionId: 'chat-1' }, at(0.9, 0.1));
    await remember(subject, 'answer', { ...newMemory('Caroline: A lake at sunrise.'), sessionId: 'chat-1' }, at(-1, 0));
    await remember(other, 'otherWife', newMemory("Bob's wife Kim is a pilot."), at(0.5, 0.5));
  }, 120_000);
  afterAll(() => closeTestDatabase(db));

  const asSubject = <T>(work: (trx: DbTransaction, context: RetrieverContext) => Promise<T>, who = subject) =>
    db.withSubject(who, 'retrieving', (trx) => work(trx, { trx, spaces: who, filters: NO_FILTERS, memories: 5 }));
  const question = (text: string, probe = at(1, 0), extra: Partial<RecallQuestion> = {}): RecallQuestion => ({
    vector: probe,
    filters: NO_FILTERS,
    words: contentWords(text),
    alternatives: [],
    meaningWords: [],
    personWords: [],
    personSearched: [],
    firstTexts: { count: () => 0, chars: 100 },
    ...extra,
  });
  const plan = (text: string, extra: Partial<RecallQuestion> = {}, who = subject) =>
    asSubject((trx) => gatherFirstEvidence(trx, who, question(text, at(1, 0), extra), { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT }), who);

  describe('the planner, gatherFirstEvidence', () => {
    it('ranks by vector and by full text in the statements it plans, with the size and the look-ups of the question\'s words', async () => {
      const evidence = await asSubject((trx) =>
        gatherFirstEvidence(trx, subject, question('Which instrument does Theo play?', at(1, 0), { meaningWords: ['instrument', 'violin'], personWords: ['wife'] }), {
          exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT,
        }),
      );
      // Nearest first by cosine distance to (1, 0): the son, then the question turn; never the other subject's.
      expect(evidence.nearest.slice(0, 2)).toEqual([ids.son, ids.question]);
      expect(evidence.nearest).toHaveLength(5);
      expect(evidence.plan).toBe('exact');
      expect(evidence.worded[0]!.id).toBe(ids.son);
      expect(evidence.worded.map((hit) => hit.id)).not.toContain(ids.otherWife);
      expect(evidence).toMatchObject({ memories: 5, inConversations: 2, restatements: [] });
      // "violin" is in a memory, "instrument" in none; "wife" is.
      expect(evidence.lookups).toEqual({ unused: ['instrument'], usesPersonWords: true, unusedAlternatives: [] });
      const separately = await asSubject((trx) =>
        gatherFirstEvidence(trx, subject, question('Which instrument does Theo play?', at(1, 0), { meaningWords: ['instrument', 'violin'], personWords: ['wife'] }), { exactScanLimit: 2 }),
      );
      expect(separately).toEqual(evidence);
    });

    it('searches the other words for a question word only where some memory uses them', async () => {
      const asked = (alternatives: string[]) =>
        asSubject((trx) => gatherFirstEvidence(trx, subject, question('Who is the spouse?', at(0, 1), { alternatives }), { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT }));
      // No memory says "spouse": by full text, nothing; "wife" is in one memory (and another subject's), "husband" in none.
      expect((await asked([])).worded).toEqual([]);
      const evidence = await asked(['wife', 'husband']);
      expect(evidence.worded.map((hit) => hit.id)).toEqual([ids.wife]);
      expect(evidence.lookups.unusedAlternatives).toEqual(['husband']);
    });

    it("reads the texts of each ranking's first memories with the rankings, as many as the look-ups call for", async () => {
      const asked: number[] = [];
      const firstTexts = { count: (lookups: { unused: string[] }) => (asked.push(lookups.unused.length), 2), chars: 12 };
      const evidence = await plan('Which instrument does Theo play?', { meaningWords: ['instrument'], firstTexts });
      expect(asked).toEqual([1]);
      // At least the first two of each ranking (a few more, in case the fused first two are not), nothing else.
      const firsts = [...evidence.nearest.slice(0, 2), ...evidence.worded.slice(0, 2).map((hit) => hit.id)];
      const ranked = new Set([...evidence.nearest, ...evidence.worded.map((hit) => hit.id)]);
      expect([...evidence.texts.keys()]).toEqual(expect.arrayContaining(firsts));
      expect([...evidence.texts.keys()].every((id) => ranked.has(id))).toBe(true);
      expect(evidence.texts.get(ids.son!)).toBe("The user's s");
      expect((await plan('Which instrument does Theo play?')).texts.size).toBe(0);
      // Read in the index walk's statement too (which, short of the depth here, the exact scan then completes).
      const walked = await asSubject((trx) =>
        gatherFirstEvidence(trx, subject, question('Which instrument does Theo play?', at(1, 0), { meaningWords: ['instrument'], firstTexts }), { exactScanLimit: 2 }),
      );
      expect(walked.texts).toEqual(evidence.texts);
    });

    it('ranks by the person words when the memories use none of those asked, and only then', async () => {
      const spouse = { personWords: ['spouse'], personSearched: ['partner', 'husband', 'wife'] };
      const evidence = await plan("Who is the user's spouse?", spouse);
      expect(evidence.person?.map((hit) => hit.id)).toEqual([ids.wife]);
      expect(personRetriever(evidence)).toEqual({ ids: [ids.wife], weight: RETRIEVER_WEIGHTS.person });
      // "wife" is used: the question's own full text finds her.
      expect((await plan("Who is the user's wife?", { personWords: ['wife'], personSearched: ['partner', 'husband', 'spouse'] })).person).toBeUndefined();
      expect((await plan("Who is the user's spouse?", { personWords: ['spouse'] })).person).toBeUndefined();
      expect(personRetriever({ person: undefined })).toBeUndefined();
      // Never another subject's memories.
      expect((await plan("Who is Bob's spouse?", spouse, other)).person?.map((hit) => hit.id)).toEqual([ids.otherWife]);
      const separately = await asSubject((trx) => gatherFirstEvidence(trx, subject, question("Who is the user's spouse?", at(1, 0), spouse), { exactScanLimit: 2 }));
      expect(separately.person).toEqual(evidence.person);
    });

    it('ranks restatements only for a subject that has some, each by vector and by words', async () => {
      const restated = 'retrievers-restated';
      const memoryId = await db.withSubject(restated, 'inserting', async (trx) => {
        const id = await insertMemory(trx, restated, newMemory('The user is allergic to penicillin.'), { whole: at(0, 1), passages: [] });
        await insertRestatement(trx, restated, id, { ...newMemory('Penicillin gives the user hives.') }, at(1, 0));
        return id;
      });
      const evidence = await asSubject((trx) => gatherFirstEvidence(trx, restated, question('hives', at(1, 0)), { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT }), restated);
      expect(evidence.restatements).toEqual([expect.objectContaining({ memoryId, text: 'Penicillin gives the user hives.', coverage: 1 })]);
      expect(evidence.restatements[0]!.distance).toBeLessThan(evidence.restatements[0]!.memoryDistance!);
      // They ride in the vector ranking's statement (through JSON): the same hits as their own statement gives.
      const alone = await asSubject((trx) => restatementRanking(trx, restated, NO_FILTERS, contentWords('hives'), at(1, 0), RANKING_DEPTH, 500), restated);
      expect(evidence.restatements).toEqual(alone);
      expect(evidence.restatements[0]!.createdAt).toBeInstanceOf(Date);
      // A subject larger than the exact scan's limit with no index to walk (these vectors' dimension has none) is
      // ranked exactly, the full text and the restatements in statements of their own: the same evidence.
      const separately = await asSubject((trx) => gatherFirstEvidence(trx, restated, question('hives', at(1, 0)), { exactScanLimit: 0 }), restated);
      expect(separately).toEqual(evidence);
    });
  });

  describe('the bridge retriever', () => {
    const firstTexts = (texts: string[]): FirstResultTexts => async (count) => texts.slice(0, count).map((text, index) => ({ id: -index - 1, text }));

    it('searches the name the first results give the role asked about, with the question\'s words', async () => {
      // The lessons' memory shares no word with the question: only the name "Theo" reaches it.
      const asked = "Who teaches the user's son?";
      const ranking = await asSubject((_, context) => bridgeRetriever(context, asked, contentWords(asked), firstTexts(["The user's son Theo is 9 and plays the violin."])));
      expect(ranking!.ids[0]).toBe(ids.son);
      expect(ranking!.ids).toContain(ids.teacher);
      expect(ranking!.ids).not.toContain(ids.otherWife);
      expect(ranking!.weight).toBe(RETRIEVER_WEIGHTS.bridge);
      expect(ranking!.confidence).toHaveLength(ranking!.ids.length);
    });

    it('searches the name the best result gives the person a later clause refers back to, with that clause\'s words', async () => {
      const asked = 'Who plays the violin, and who teaches him?';
      const ranking = await asSubject((_, context) => bridgeRetriever(context, asked, contentWords(asked), firstTexts(["The user's son Theo is 9 and plays the violin."])));
      expect(ranking!.ids).toContain(ids.teacher);
      expect(ranking!.ids).not.toContain(ids.wife);
      // Without the clause that refers back, the same question bridges nothing.
      const alone = 'Who plays the violin?';
      expect(await asSubject((_, context) => bridgeRetriever(context, alone, contentWords(alone), firstTexts(["The user's son Theo is 9 and plays the violin."])))).toBeUndefined();
    });

    it('says nothing for a question that names no role, or when the first results name nobody', async () => {
      const ranking = (asked: string, texts: string[]) => asSubject((_, context) => bridgeRetriever(context, asked, contentWords(asked), firstTexts(texts)));
      expect(await ranking('Which instrument does Theo play?', ["The user's son Theo is 9."])).toBeUndefined();
      expect(await ranking("Who teaches the user's son?", ['Caroline: A lake at sunrise.'])).toBeUndefined();
    });
  });

  describe('the continuation retriever', () => {
    const notRead = { inConversations: 2, continuations: new Map<number, Continuation | null>() };

    it('ranks what was said next in the best result\'s conversation', async () => {
      expect(await asSubject((_, context) => continuationRetriever(context, ids.question!, notRead))).toEqual({ ids: [ids.answer], weight: RETRIEVER_WEIGHTS.continuation });
    });

    it('says nothing after a memory outside any conversation, and looks nothing up for a subject with none', async () => {
      expect(await asSubject((_, context) => continuationRetriever(context, ids.son!, notRead))).toBeUndefined();
      // Told the subject has no memory in a conversation, it does not look: even the question's answer is not found.
      expect(await asSubject((_, context) => continuationRetriever(context, ids.question!, { ...notRead, inConversations: 0 }))).toBeUndefined();
    });

    it('takes what the planner read with the rankings without looking again', async () => {
      const read = { inConversations: 2, continuations: new Map<number, Continuation | null>([[ids.question!, { next: ids.son! }], [ids.son!, null]]) };
      expect(await asSubject((_, context) => continuationRetriever(context, ids.question!, read))).toEqual({ ids: [ids.son], weight: RETRIEVER_WEIGHTS.continuation });
      expect(await asSubject((_, context) => continuationRetriever(context, ids.son!, read))).toBeUndefined();
      // Past a short turn, the turn after it comes second.
      const pastShort = { inConversations: 3, continuations: new Map<number, Continuation | null>([[ids.question!, { next: ids.son!, after: ids.wife! }]]) };
      expect(await asSubject((_, context) => continuationRetriever(context, ids.question!, pastShort))).toEqual({ ids: [ids.son, ids.wife], weight: RETRIEVER_WEIGHTS.continuation });
      // What the planner read: the next memory after each ranking's very first, null after one outside a conversation.
      const evidence = await plan('What did you paint?');
      expect(evidence.continuations.get(ids.question!)).toEqual({ next: ids.answer });
      expect(evidence.continuations.get(ids.son!)).toBeNull();
      expect(await asSubject((_, context) => continuationRetriever(context, ids.question!, evidence))).toEqual({ ids: [ids.answer], weight: RETRIEVER_WEIGHTS.continuation });
      // Filters and subjects: the same query as continuationOf's (test/db/conversation.test.ts).
    });
  });

  describe('the results read with a search (arrangeFirstResults)', () => {
    const wanted = { limit: 2, maxChars: 1000 };
    const preliminary = () => [ids.wife!, ids.question!].map((id, position) => ({ id, score: 1 - position / 10 }));

    it('runs the search in the results\' statement: its hits make the ranking final and come with their records', async () => {
      let hitsSeen: number[] = [];
      let alone = 0;
      const arranged = await asSubject((trx, context) => {
        const bridge = bridgeStatement(context, 'lessons Theo Bell');
        return arrangeFirstResults(trx, subject, { text: 'Who gives Theo lessons?', selfNames: [] }, preliminary(), wanted, {
          search: bridge.statement,
          rank: (hits) => {
            hitsSeen = hits.map((hit) => hit.id);
            return [...hits.map((hit) => ({ id: hit.id, score: 1 })), ...preliminary().filter((item) => !hitsSeen.includes(item.id))];
          },
          searchAlone: () => {
            alone++;
            return bridge.alone();
          },
        });
      });
      expect(hitsSeen[0]).toBe(ids.teacher);
      expect(alone).toBe(0);
      expect(arranged.ranked[0]!.id).toBe(ids.teacher);
      expect(arranged.records.get(ids.teacher!)?.text).toBe("Theo's lessons are with Mr Bell on Saturdays.");
      // Never another subject's, whatever the search is asked.
      expect(arranged.records.has(ids.otherWife!)).toBe(false);
    });

    it('reads again a final first result that was neither among the results nor among the search\'s hits', async () => {
      const arranged = await asSubject((trx, context) => {
        const bridge = bridgeStatement(context, 'lessons Theo Bell');
        return arrangeFirstResults(trx, subject, { text: 'Who gives Theo lessons?', selfNames: [] }, preliminary(), wanted, {
          search: bridge.statement,
          rank: () => [{ id: ids.answer!, score: 1 }, ...preliminary()],
          searchAlone: bridge.alone,
        });
      });
      expect(arranged.ranked[0]!.id).toBe(ids.answer);
      expect(arranged.records.get(ids.answer!)?.text).toBe('Caroline: A lake at sunrise.');
    });
  });

  describe('the ranking as a whole', () => {
    /**
     * Where the bridge's answer ranks for `question` in a subject of its own: the memory that names the person (nearest
     * the question), six memories nearer the question than the answer and sharing its words (they outrank it in the
     * fused ranking), and the answer, which only names the person.
     */
    async function answerPlace(family: string, question: string, namer: string, nearer: readonly string[], answerText: string): Promise<number> {
      const put = (text: string, embedding: ReturnType<typeof at>) =>
        db.withSubject(family, 'inserting', (trx) => insertMemory(trx, family, newMemory(text), { whole: embedding, passages: [] }));
      await put(namer, at(1, 0));
      for (const [index, text] of nearer.entries()) await put(text, at(1, 0.1 + index / 20));
      const answer = await put(answerText, at(0, 1));
      const ranked = await db.withSubject(family, 'recalling', (trx) =>
        rankMemories(trx, family, { text: question, vector: at(1, 0), filters: NO_FILTERS }, { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT, results: { limit: 5, maxChars: 1000 } }),
      );
      return ranked.ranked.findIndex((item) => item.id === answer);
    }

    it("gives a later clause's answer, found through the name the first clause's answer gives, a place among the first", async () => {
      const nearer = ['Leon is planning to marry in Porto.', "Leon's parents live in Porto.", 'Leon works as a head chef.', 'Leon married young.', 'Leon and the user went to Crete.', "Leon's cousin is married to a sailor."];
      const place = await answerPlace('retrievers-later-clause', "Who is Leon's sister, and who is she married to?", "Leon's sister Beatriz is a nurse in Lisbon.", nearer, "Beatriz's husband Rui teaches maths.");
      expect(place).toBe(BRIDGED_ANSWER_PLACE);
    });

    it("puts first the memory the question repeats word for word, and moves that memory's near-copies below the rest", async () => {
      const family = 'retrievers-word-for-word';
      const put = (text: string, embedding: ReturnType<typeof at>) =>
        db.withSubject(family, 'inserting', (trx) => insertMemory(trx, family, newMemory(text), { whole: embedding, passages: [] }));
      const asked = 'The user is on call one week in six.';
      const first = await put(asked, at(0.9, 0.1));
      const again = await put(asked, at(0.9, 0.1));
      const digits = await put('The user is on call one week in 6.', at(1, 0));
      const other = await put("The user's dentist is Dr Kaur.", at(0, 1));
      const ranked = await db.withSubject(family, 'recalling', (trx) =>
        rankMemories(trx, family, { text: asked, vector: at(1, 0), filters: NO_FILTERS }, { exactScanLimit: DEFAULT_EXACT_SCAN_LIMIT, results: { limit: 5, maxChars: 1000 } }),
      );
      const order = ranked.ranked.map((item) => item.id);
      // The digits' memory is nearer the question's vector and shares its words: fused, it comes first.
      expect([first, again]).toContain(order[0]);
      expect(order[1]).toBe(other);
      expect(new Set(order.slice(2))).toEqual(new Set([...[first, again].filter((id) => id !== order[0]), digits]));
    });

    it("gives a role question's answer, found through the name the role's holder has, a place among the first", async () => {
      const nearer = ["Maisie's dad lives in Aberdeen.", "Tomasz's parents live in Broughty Ferry.", 'Tomasz lives in a flat in Partick.', "Hana's father passed away in 2019.", 'Tomasz does the school run for a living.', 'My dad and I went fishing.'];
      const place = await answerPlace('retrievers-role', 'What did my dad do for a living?', "Tomasz's father is Alan Wren.", nearer, 'Alan worked as a marine engineer on the ferries for thirty years.');
      expect(place).toBe(BRIDGED_ANSWER_PLACE);
    });
  });
});
