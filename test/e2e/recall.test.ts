import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/db/memories/filters.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { engines } from '../helpers/engines.js';
import { newMemory } from '../helpers/memories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let subjectCounter = 0;
const newSubject = () => `recall-${Date.now()}-${subjectCounter++}`;
const hour = 3600_000;

interface Recalled {
  memory_id: number;
  text: string;
  text_truncated?: true;
  tags: string[];
  score: number;
  importance: number;
  capture_mode: string | null;
  source_provider: string | null;
  session_id: string | null;
  created_at: string;
  last_confirmed_at: string;
  expires_at: string | null;
}

/** Facts on overlapping topics, so a query must pick the right one by meaning or by an exact token. */
const FACTS = [
  'The user is allergic to penicillin',
  'The user drives a blue Volvo with licence plate KX-4471-B',
  'The user works as a nurse at St. Mary hospital',
  "The user's daughter Emma starts school in September",
  'The user prefers aisle seats on long flights',
  'The user booked flight LH1234 to Tokyo for March 3',
  'The user is learning to play the cello',
  'The user keeps two cats named Miso and Tofu',
  'The user runs the Berlin marathon every year',
  'The user dislikes coriander in food',
  'Order 88213-ZQ of running shoes arrives on Friday',
  'The user takes 20 mg of atorvastatin every evening',
];

describe.each(engines)('recall on %s', (engine) => {
  let server: TestServer;
  let subject: string;
  let token: string;
  const ids = new Map<string, number>();

  beforeAll(async () => {
    server = await startTestServer({ engine });
    subject = newSubject();
    token = await server.token(subject);
    for (const text of FACTS) {
      const { structured } = await server.call(token, 'remember', { text, dedup_policy: 'insert' });
      ids.set(text, structured.memory_id as number);
    }
  });
  afterAll(async () => {
    await server.close();
  });

  /** Raw SQL within one subject's row-level security (the table owner is subject to it too: FORCE). */
  const asSubject = (who: string, statement: string) =>
    server.service.db.withSubject(who, 'inspecting rows', (trx) => sql.raw(statement).execute(trx));

  async function recall(args: Record<string, unknown>, as = token) {
    const { isError, structured } = await server.call(as, 'recall', args);
    expect(isError, JSON.stringify(structured)).toBe(false);
    return structured as { ok: true; memories: Recalled[]; cut_by: string | null; message: string };
  }
  const top = async (query: string) => (await recall({ query, limit: 3 })).memories[0]?.text;

  it.each([
    ['Which antibiotic must I avoid?', 'The user is allergic to penicillin'],
    ['What car do I have?', 'The user drives a blue Volvo with licence plate KX-4471-B'],
    ['What is my profession?', 'The user works as a nurse at St. Mary hospital'],
    ['Where do I like to sit on a plane?', 'The user prefers aisle seats on long flights'],
    ['pets at home', 'The user keeps two cats named Miso and Tofu'],
    ['Which musical instrument am I studying?', 'The user is learning to play the cello'],
  ])('finds a paraphrase: %s', async (query, expected) => {
    expect(await top(query)).toBe(expected);
  });

  it.each([
    ['KX-4471-B', 'The user drives a blue Volvo with licence plate KX-4471-B'],
    ['LH1234', 'The user booked flight LH1234 to Tokyo for March 3'],
    ['88213-ZQ', 'Order 88213-ZQ of running shoes arrives on Friday'],
    ['atorvastatin', 'The user takes 20 mg of atorvastatin every evening'],
    ['Miso', 'The user keeps two cats named Miso and Tofu'],
  ])('finds an exact name, number or identifier: %s', async (query, expected) => {
    expect(await top(query)).toBe(expected);
  });

  it('reaches a fact about someone by their role through the name another fact gives them', async () => {
    // The son's facts share no word with the question; only "The user's son Oskar …" says who the son is.
    const other = await server.token(newSubject());
    const bridged = [
      "The user's son Oskar is seven.",
      'Oskar has a peanut allergy and carries an EpiPen.',
      "Oskar's football coach is Mr Adeyemi.",
    ];
    for (const text of [...FACTS, ...bridged]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const found = (await recall({ query: "What medical condition does the user's son have?", limit: 3 }, other)).memories.map((memory) => memory.text);
    expect(found).toContain(bridged[1]);
    // The bridge joins the question's words: the coach's fact (the name alone) stays below the one that answers.
    expect(found.indexOf(bridged[1]!)).toBeLessThan(found.includes(bridged[2]!) ? found.indexOf(bridged[2]!) : 3);
  });

  it('puts what holds now first, and what held before first when the question asks about the past', async () => {
    const other = await server.token(newSubject());
    const [before, now] = ['The user lived in a flat in Cardiff until March 2024.', 'The user now lives in a house in Bristol.'];
    // The current fact is stored first here, and the one that held before last: the words say which is which.
    for (const text of [now, ...FACTS, before]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const first = async (query: string) => (await recall({ query, limit: 5 }, other)).memories[0]?.text;
    expect(await first('Where does the user live these days?')).toBe(now);
    expect(await first('Where did the user live before?')).toBe(before);
  });

  it('asked what came before a name, does not answer with the memory that names it', async () => {
    const other = await server.token(newSubject());
    const [japanese, spanish] = ['The user is learning Japanese with a tutor on Wednesday evenings.', 'I used to take evening classes in Spanish.'];
    for (const text of [spanish, ...FACTS, japanese]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const first = async (query: string) => (await recall({ query, limit: 5 }, other)).memories[0]?.text;
    expect(await first('Which language is the user learning with a tutor?')).toBe(japanese);
    expect(await first('Which language did the user study before Japanese?')).toBe(spanish);
  });

  it('puts the version of a fact known more recently first: stored later, or confirmed since', async () => {
    const other = await server.token(newSubject());
    const [older, newer] = ["The user's dentist is Dr Kaur on Gloucester Road.", "The user's dentist is Dr Byrne at Easton Dental."];
    const stored = new Map<string, number>();
    for (const text of [older, ...FACTS, newer]) stored.set(text, (await server.call(other, 'remember', { text, dedup_policy: 'insert' })).structured.memory_id as number);
    const texts = async (query: string) => (await recall({ query, limit: 5 }, other)).memories.map((memory) => memory.text);
    expect((await texts("Who is the user's dentist?")).slice(0, 2)).toEqual([newer, older]);
    expect((await texts("Who was the user's previous dentist?")).slice(0, 2)).toEqual([older, newer]);
    await server.call(other, 'confirm', { memory_id: stored.get(older) });
    expect((await texts("Who is the user's dentist?")).slice(0, 2)).toEqual([older, newer]);
  });

  it('puts the answer stored or confirmed last first between two answers that name no one, unless asked about the past', async () => {
    const other = await server.token(newSubject());
    const [older, newer] = ['Home internet is Xfinity on the 400 Mbps plan.', 'The house has Ziply Fiber gigabit internet.'];
    const stored = new Map<string, number>();
    for (const text of [older, ...FACTS, newer]) stored.set(text, (await server.call(other, 'remember', { text, dedup_policy: 'insert' })).structured.memory_id as number);
    const texts = async (query: string) => (await recall({ query, limit: 5 }, other)).memories.map((memory) => memory.text);
    expect((await texts('Who provides our home internet?')).slice(0, 2)).toEqual([newer, older]);
    expect((await texts('Who provided our home internet before?')).slice(0, 2)).toEqual([older, newer]);
    await server.call(other, 'confirm', { memory_id: stored.get(older) });
    expect((await texts('Who provides our home internet?')).slice(0, 2)).toEqual([older, newer]);
  });

  it('reads the name the memories call the user by as the user: the answer stored last comes first', async () => {
    const other = await server.token(newSubject());
    const [skoda, hyundai] = ['Tomasz drives a red Skoda Octavia estate.', 'I drive a grey Hyundai Ioniq 5.'];
    for (const text of [skoda, ...FACTS.slice(2), hyundai]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const first = async (query: string) => (await recall({ query, limit: 5 }, other)).memories[0]?.text;
    // Nothing says who Tomasz is: the question names him, and the text that names him answers it.
    expect(await first('What car does Tomasz drive?')).toBe(skoda);
    // Told now (after the service read this subject's names): Tomasz is the user, and his latest car comes first.
    await server.call(other, 'remember', { text: 'My name is Tomasz Nowak.', dedup_policy: 'insert' });
    expect(await first('What car does Tomasz drive?')).toBe(hyundai);
    expect(await first('What car did Tomasz drive before?')).toBe(skoda);
  });

  it('forgets the names it read of a user who erases everything', async () => {
    // A service of its own, whose erase is called directly (the page's route is tested with the page).
    const service = new MemoryService({ db: server.service.db, embedder: server.service.embedder, nearDuplicateThreshold: server.config.memory.nearDuplicateThreshold });
    const who = newSubject();
    const [skoda, hyundai] = ['Tomasz drives a red Skoda Octavia estate.', 'I drive a grey Hyundai Ioniq 5.'];
    const store = async (texts: readonly string[]) => {
      for (const text of texts) await service.remember(who, newMemory(text), 'insert');
    };
    const first = async () => (await service.recall(who, { query: 'What car does Tomasz drive?', limit: 5, maxChars: 8000, filters: NO_FILTERS })).memories[0]?.text;
    await store(['My name is Tomasz Nowak.', skoda, ...FACTS.slice(2), hyundai]);
    expect(await first()).toBe(hyundai);
    await service.eraseEverything(who);
    // The same memories again, but nothing says who Tomasz is any more.
    await store([skoda, ...FACTS.slice(2), hyundai]);
    expect(await first()).toBe(skoda);
  });

  it('moves a fact told again after the facts that add something, so a two-fact question gets both', async () => {
    const other = await server.token(newSubject());
    const [allergy, again, hobbies] = ['Ivy is allergic to eggs.', 'Ivy has an egg allergy.', 'Ivy loves painting and swimming.'];
    for (const text of [...FACTS, allergy, 'Ivy goes to Sunflowers nursery on weekdays.', again, hobbies]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const all = (await recall({ query: 'What is Ivy allergic to, and what does she like doing?', limit: 10 }, other)).memories.map((memory) => memory.text);
    // Both allergy texts rank above the hobbies by their words; the one ranked second is still returned, only lower.
    const found = all.slice(0, 3);
    expect(found).toContain(hobbies);
    expect(found.filter((text) => text === allergy || text === again)).toHaveLength(1);
    expect(all).toEqual(expect.arrayContaining([allergy, again]));
  });

  it('finds a person under the word the memories use for them ("spouse" asked, "partner" stored)', async () => {
    const other = await server.token(newSubject());
    const partner = "The user's partner Alex teaches chemistry at Hillside Academy.";
    for (const text of [...FACTS, partner, "The user's brother Tom lives in Leeds."]) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const found = (await recall({ query: 'Who is my spouse?', limit: 1 }, other)).memories.map((memory) => memory.text);
    expect(found).toContain(partner);
  });

  it('ranks what was said right after the best match in the same conversation higher (session_id)', async () => {
    // The answer shares only the speaker's name with the question; the turn before it is what the question matches,
    // and other turns of the speaker's, from other conversations, share as much or more.
    const conversation = [
      ['Melanie: Caroline, what did you paint last week for the art fair?', 'chat-fair'],
      ["Caroline: A sunrise over the lake by my grandmother's cottage.", 'chat-fair'],
      ['Caroline: I painted the kitchen walls green last spring.', 'chat-home'],
      ['Caroline: Last week was busy, the fair took all my evenings.', 'chat-busy'],
      ['Melanie: The art fair had a great turnout this year.', 'chat-busy'],
      ['Caroline: My grandmother sold her cottage by the lake.', 'chat-family'],
      ['Caroline: I went to the lake with Melanie last week.', 'chat-trip'],
      ['Caroline: The fair took all my evenings.', 'chat-evenings'],
      ['Caroline: Sunsets are my favourite thing to draw.', 'chat-drawing'],
    ] as const;
    const [question, answer] = [conversation[0][0], conversation[1][0]];
    const recalledAs = async (withSessions: boolean) => {
      const who = await server.token(newSubject());
      for (const text of FACTS) await server.call(who, 'remember', { text, dedup_policy: 'insert' });
      for (const [text, session] of conversation) {
        await server.call(who, 'remember', { text, dedup_policy: 'insert', ...(withSessions ? { session_id: session } : {}) });
      }
      return (await recall({ query: 'What did Caroline paint last week?', limit: 10 }, who)).memories.map((memory) => memory.text);
    };
    const inConversation = await recalledAs(true);
    // The same memories outside any conversation: nothing says the answer follows the question.
    const apart = await recalledAs(false);
    expect([inConversation[0], apart[0]]).toEqual([question, question]);
    expect(apart).toContain(answer);
    expect(inConversation.indexOf(answer)).toBeGreaterThan(0);
    expect(inConversation.indexOf(answer)).toBeLessThan(apart.indexOf(answer));
  });

  it('finds a long memory by the one sentence a question is about (passages)', async () => {
    // Conversation turns of several sentences: the car is a by-the-way at the end of a turn about a trip, whose
    // whole-text vector the trip outweighs; no word of the question but "Sam" is in any of them.
    const other = await server.token(newSubject());
    const turns = [
      'Sam: Morning! Sorry I missed your call yesterday, the kids had a busy weekend. We took them to the coast and they loved the rock pools. Let me know if you still want to meet for lunch.',
      "Sam: Work has been hectic this month. My manager moved the product launch forward by two weeks, so I've been staying late. I'm trying to keep my evenings free for running, though.",
      'Sam: Thanks for the book recommendation! I finished it on the train. The ending surprised me, and now I want to read everything else she wrote.',
      'Sam: Good news on the house front. The plumber finally fixed the boiler on Thursday, so we have hot water again. The kitchen still needs painting, but that can wait.',
      "Sam: How was your trip to Lisbon? I've heard the food there is amazing. We're thinking of going in the spring if we can find cheap flights. By the way, I sold my old car to a neighbour.",
      "Sam: I've started volunteering at the animal shelter on Saturdays. Mostly walking dogs and cleaning kennels. It's tiring but I really enjoy it.",
    ];
    for (const text of turns) await server.call(other, 'remember', { text, dedup_policy: 'insert' });
    const found = (await recall({ query: "What happened to Sam's vehicle?", limit: 1 }, other)).memories.map((memory) => memory.text);
    expect(found).toEqual([turns[4]]);
  });

  it('returns every documented field, best first, with scores in (0, 1]', async () => {
    const result = await recall({ query: 'allergy to antibiotics' });
    expect(result.ok).toBe(true);
    expect(result.memories.length).toBe(10);
    expect(result.cut_by).toBe('limit');
    expect(result.message).toMatch(/^10 memories, best match first; more are stored/);
    const first = result.memories[0]!;
    expect(first).toEqual({
      memory_id: ids.get('The user is allergic to penicillin'),
      text: 'The user is allergic to penicillin',
      tags: [],
      score: expect.any(Number),
      importance: 0.5,
      capture_mode: null,
      source_provider: null,
      session_id: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      last_confirmed_at: expect.stringMatching(/Z$/),
      expires_at: null,
      space: { id: 'personal', name: 'Personal' },
    });
    const scores = result.memories.map((memory) => memory.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const score of scores) expect(score > 0 && score <= 1).toBe(true);
  });

  it('honours limit and says when everything was returned', async () => {
    expect((await recall({ query: 'the user', limit: 2 })).memories).toHaveLength(2);
    const all = await recall({ query: 'the user', limit: 50 });
    expect(all.memories).toHaveLength(FACTS.length);
    expect(all.cut_by).toBeNull();
    expect(new Set(all.memories.map((memory) => memory.memory_id)).size).toBe(FACTS.length);
  });

  it('works for queries made only of stop words or of tsquery operators', async () => {
    for (const query of ['what is it?', "O'Brien's e-mail & | ! :* <-> (a) \\ 'x'", '🧠', '"quoted"']) {
      const result = await recall({ query });
      expect(result.memories.length).toBeGreaterThan(0);
    }
  });

  it('never returns expired memories', async () => {
    const own = newSubject();
    const ownToken = await server.token(own);
    const soon = await server.call(ownToken, 'remember', { text: 'The user is visiting Lisbon this week', expires_at: new Date(Date.now() + hour).toISOString() });
    const kept = await server.call(ownToken, 'remember', { text: 'The user was born in Lisbon' });
    expect((await recall({ query: 'Lisbon' }, ownToken)).memories.map((memory) => memory.memory_id)).toContain(soon.structured.memory_id);
    await asSubject(own, `update memories set expires_at = now() - interval '1 second' where id = ${soon.structured.memory_id as number}`);
    const after = await recall({ query: 'Lisbon visit this week', limit: 50 }, ownToken);
    expect(after.memories.map((memory) => memory.memory_id)).toEqual([kept.structured.memory_id]);
    expect(after.cut_by).toBeNull();
  });

  describe('filters', () => {
    let own: string;
    let ownToken: string;
    const stored: Record<string, number> = {};

    beforeAll(async () => {
      own = newSubject();
      ownToken = await server.token(own);
      const rows: [string, Record<string, unknown>][] = [
        ['a', { text: 'The user plays tennis on Mondays', tags: ['Sport', 'weekly'], session_id: 's-1', capture_mode: 'explicit', source_provider: 'gpt-5' }],
        ['b', { text: 'The user plays chess online', tags: ['games', 'weekly'], session_id: 's-1', capture_mode: 'inferred', source_provider: 'claude' }],
        ['c', { text: 'The user plays football with colleagues', tags: ['sport'], session_id: 's-2', capture_mode: 'inferred', source_provider: 'gpt-5' }],
        ['d', { text: 'The user plays the piano', session_id: 's-2', source_provider: 'claude' }],
      ];
      for (const [key, args] of rows) {
        const { structured } = await server.call(ownToken, 'remember', { ...args, dedup_policy: 'insert' });
        stored[key] = structured.memory_id as number;
      }
      // Spread creation times one day apart: a 4 days ago … d 1 day ago.
      for (const [index, key] of ['a', 'b', 'c', 'd'].entries()) {
        await asSubject(own, `update memories set created_at = now() - interval '${4 - index} days' where id = ${stored[key]}`);
      }
    });

    const days = (n: number) => new Date(Date.now() - n * 24 * hour).toISOString();
    const matching = async (filters: Record<string, unknown>) =>
      (await recall({ query: 'what does the user play', limit: 50, ...filters }, ownToken)).memories.map((memory) => memory.memory_id).sort();
    const keys = (...names: string[]) => names.map((name) => stored[name]).sort();

    it.each([
      ['no filter', {}, ['a', 'b', 'c', 'd']],
      ['tags any (normalised)', { tags: ['#SPORT'] }, ['a', 'c']],
      ['tags any of two', { tags: ['sport', 'games'] }, ['a', 'b', 'c']],
      ['tags all', { tags: ['sport', 'weekly'], tag_match: 'all' }, ['a']],
      ['tags all, none has both', { tags: ['games', 'sport'], tag_match: 'all' }, []],
      ['session_id', { session_id: 's-2' }, ['c', 'd']],
      ['capture_mode', { capture_mode: 'inferred' }, ['b', 'c']],
      ['source_provider', { source_provider: 'claude' }, ['b', 'd']],
      ['created_after (inclusive window)', { created_after: days(2.5) }, ['c', 'd']],
      ['created_before', { created_before: days(2.5) }, ['a', 'b']],
      ['created window', { created_after: days(3.5), created_before: days(1.5) }, ['b', 'c']],
      ['filters combined with AND', { tags: ['weekly'], source_provider: 'gpt-5', session_id: 's-1' }, ['a']],
    ])('%s', async (_name, filters, expected) => {
      expect(await matching(filters)).toEqual(keys(...expected));
    });

    it('says so when filters leave nothing', async () => {
      const result = await recall({ query: 'tennis', session_id: 'no-such-session' }, ownToken);
      expect(result).toEqual({ ok: true, memories: [], cut_by: null, message: 'No stored memory matches with these filters' });
    });
  });

  describe('max_chars', () => {
    it('stops before the first memory that would exceed the budget', async () => {
      const result = await recall({ query: 'the user', limit: 50, max_chars: 200 });
      const total = result.memories.reduce((sum, memory) => sum + memory.text.length, 0);
      expect(total).toBeLessThanOrEqual(200);
      expect(result.memories.length).toBeGreaterThan(1);
      expect(result.memories.length).toBeLessThan(FACTS.length);
      expect(result.cut_by).toBe('max_chars');
      expect(result.message).toMatch(/max_chars/);
    });

    it('returns a first memory longer than the budget cut to it, flagged', async () => {
      const own = newSubject();
      const ownToken = await server.token(own);
      const long = `The user wrote a long story about dragons: ${'🐉 and castles '.repeat(400)}`;
      await server.call(ownToken, 'remember', { text: long });
      const result = await recall({ query: 'dragons story', max_chars: 300 }, ownToken);
      expect(result.memories).toHaveLength(1);
      expect(result.memories[0]!.text_truncated).toBe(true);
      expect([...result.memories[0]!.text].length).toBe(300);
      expect(long.startsWith(result.memories[0]!.text)).toBe(true);
      expect(result.cut_by).toBe('max_chars');
    });
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['missing query', {}, /^query: is required$/],
    ['blank query', { query: '   ' }, /^query: must not be blank$/],
    ['query too long', { query: 'x'.repeat(1001) }, /^query: must be at most 1000 characters$/],
    ['query not a string', { query: 7 }, /^query: must be a string$/],
    ['limit 0', { query: 'x', limit: 0 }, /^limit: must be an integer from 1 to 50$/],
    ['limit 51', { query: 'x', limit: 51 }, /^limit: must be an integer from 1 to 50$/],
    ['limit fractional', { query: 'x', limit: 2.5 }, /^limit: must be an integer from 1 to 50$/],
    ['limit as a string', { query: 'x', limit: '5' }, /^limit: must be an integer from 1 to 50$/],
    ['max_chars too small', { query: 'x', max_chars: 10 }, /^max_chars: must be an integer from 200 to 100000$/],
    ['max_chars too large', { query: 'x', max_chars: 1_000_000 }, /^max_chars: must be an integer from 200 to 100000$/],
    ['tag_match unknown', { query: 'x', tags: ['a'], tag_match: 'some' }, /^tag_match: must be one of "any", "all"$/],
    ['tags not an array', { query: 'x', tags: 'a' }, /^tags: must be an array of strings$/],
    ['tag empty', { query: 'x', tags: ['#'] }, /^tags\[0\] is empty after normalisation$/],
    ['capture_mode unknown', { query: 'x', capture_mode: 'guessed' }, /^capture_mode: must be one of "explicit", "inferred"$/],
    ['session_id empty', { query: 'x', session_id: ' ' }, /^session_id: must not be empty$/],
    ['created_after not a timestamp', { query: 'x', created_after: 'yesterday' }, /^created_after: must be an ISO 8601 timestamp/],
    ['created_before without zone', { query: 'x', created_before: '2025-01-01T00:00:00' }, /^created_before: must be an ISO 8601 timestamp/],
    [
      'an empty time window',
      { query: 'x', created_after: '2025-02-01T00:00:00Z', created_before: '2025-01-01T00:00:00Z' },
      /^created_before: must be later than created_after$/,
    ],
    ['an unknown argument', { query: 'x', top_k: 3 }, /^unknown argument "top_k"$/],
  ];

  it.each(invalid)('refuses %s with INVALID_INPUT naming the argument', async (_name, args, message) => {
    const { isError, structured } = await server.call(token, 'recall', args);
    expect(isError).toBe(true);
    expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(message) } });
  });

  it('accepts null for every optional argument', async () => {
    const nulls = Object.fromEntries(
      ['limit', 'tags', 'tag_match', 'session_id', 'capture_mode', 'source_provider', 'created_after', 'created_before', 'max_chars'].map((key) => [key, null]),
    );
    const result = await recall({ query: 'cello', ...nulls });
    expect(result.memories[0]!.text).toBe('The user is learning to play the cello');
  });
});
