import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const hour = 3600_000;
const future = () => new Date(Date.now() + 24 * hour).toISOString();
const past = () => new Date(Date.now() - 24 * hour).toISOString();
let subjectCounter = 0;
const newSubject = () => `subject-${Date.now()}-${subjectCounter++}`;

describe.each(engines)('remember on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(async () => {
    await server.close();
  });

  const rows = (subject: string) =>
    server.service.db.withSubject(subject, 'inspecting rows', (trx) =>
      trx
        .selectFrom('memories')
        .select(['id', 'subject', 'text', 'tags', 'source_provider', 'importance', 'capture_mode', 'session_id', 'expires_at', 'last_confirmed_at', 'created_at', 'embedding_model', 'embedding_dimensions'])
        .orderBy('id')
        .execute(),
    );

  async function remember(subject: string, args: Record<string, unknown>) {
    return server.call(await server.token(subject), 'remember', args);
  }

  it('stores every field, with the spec defaults', async () => {
    const subject = newSubject();
    const { isError, structured } = await remember(subject, { text: 'The user is vegetarian' });
    expect(isError).toBe(false);
    expect(structured).toEqual({ ok: true, memory_id: expect.any(Number), space: { id: 'personal', name: 'Personal' }, message: 'Remembered', near_duplicates: [] });
    const [row] = await rows(subject);
    expect(row).toMatchObject({
      subject,
      text: 'The user is vegetarian',
      tags: [],
      source_provider: null,
      importance: 0.5,
      capture_mode: null,
      session_id: null,
      expires_at: null,
      embedding_model: 'local:universal-sentence-encoder-lite',
      embedding_dimensions: 512,
    });
    expect(Number(row!.id)).toBe(structured.memory_id);
    expect(Math.abs(row!.last_confirmed_at.getTime() - row!.created_at.getTime())).toBeLessThan(1000);

    const expires = future();
    const confirmed = past();
    const full = await remember(subject, {
      text: 'The user runs a marathon every April',
      tags: ['#Sport', '  Running_Events ', 'sport'],
      source_provider: 'gpt-5',
      importance: 1,
      capture_mode: 'explicit',
      session_id: 'conv-42',
      expires_at: expires,
      last_confirmed_at: confirmed,
      dedup_policy: 'insert',
    });
    expect(full.structured).toEqual({ ok: true, memory_id: expect.any(Number), space: { id: 'personal', name: 'Personal' }, message: 'Remembered' });
    const stored = (await rows(subject))[1]!;
    expect(stored).toMatchObject({
      tags: ['sport', 'running-events'],
      source_provider: 'gpt-5',
      importance: 1,
      capture_mode: 'explicit',
      session_id: 'conv-42',
    });
    expect(stored.expires_at!.toISOString()).toBe(expires);
    expect(stored.last_confirmed_at.toISOString()).toBe(confirmed);
  });

  it('accepts null for optional arguments, as strict-mode callers send them', async () => {
    const subject = newSubject();
    const { isError } = await remember(subject, { text: 'The user speaks Portuguese', tags: null, importance: null, capture_mode: null, expires_at: null });
    expect(isError).toBe(false);
    expect((await rows(subject))[0]).toMatchObject({ tags: [], importance: 0.5, capture_mode: null });
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['missing text', {}, /^text: is required$/],
    ['blank text', { text: ' \n\t ' }, /^text: must not be blank$/],
    ['text of the wrong type', { text: 42 }, /^text: must be a string$/],
    ['text too long', { text: 'a'.repeat(16001) }, /^text: must be at most 16000 characters$/],
    ['importance above 1', { text: 'x fact', importance: 1.01 }, /^importance: must be from 0 to 1$/],
    ['importance below 0', { text: 'x fact', importance: -0.1 }, /^importance: must be from 0 to 1$/],
    ['importance as a string', { text: 'x fact', importance: '0.5' }, /^importance: must be a number/],
    ['unknown capture_mode', { text: 'x fact', capture_mode: 'guessed' }, /^capture_mode: must be one of "explicit", "inferred"$/],
    ['unknown dedup_policy', { text: 'x fact', dedup_policy: 'merge' }, /^dedup_policy: must be one of "insert", "skip_if_near", "ask"$/],
    ['timestamp without zone', { text: 'x fact', expires_at: '2030-01-01T10:00:00' }, /^expires_at: must be an ISO 8601 timestamp with a time zone/],
    ['date only', { text: 'x fact', last_confirmed_at: '2024-01-01' }, /^last_confirmed_at: must be an ISO 8601 timestamp/],
    ['not a timestamp', { text: 'x fact', expires_at: 'tomorrow' }, /^expires_at: must be an ISO 8601/],
    ['expires_at in the past', { text: 'x fact', expires_at: past() }, /^expires_at: must be in the future$/],
    ['last_confirmed_at in the future', { text: 'x fact', last_confirmed_at: future() }, /^last_confirmed_at: must not be in the future$/],
    ['unknown argument', { text: 'x fact', colour: 'blue' }, /^unknown argument "colour"$/],
    ['tags not an array', { text: 'x fact', tags: 'health' }, /^tags: must be an array of strings$/],
    ['tag not a string', { text: 'x fact', tags: ['ok', 7] }, /^tags\[1\]: must be a string$/],
    ['tag empty after normalisation', { text: 'x fact', tags: ['ok', ' # '] }, /^tags\[1\] is empty after normalisation$/],
    ['tag too long', { text: 'x fact', tags: ['x'.repeat(65)] }, /^tags\[0\] is longer than 64 characters/],
    ['too many tags', { text: 'x fact', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, /^tags has 21 items; at most 20 are allowed$/],
    ['session_id of the wrong type', { text: 'x fact', session_id: 12 }, /^session_id: must be a string$/],
    ['source_provider empty', { text: 'x fact', source_provider: '  ' }, /^source_provider: must not be empty$/],
  ];

  it.each(invalid)('refuses %s with INVALID_INPUT and stores nothing', async (_name, args, message) => {
    const subject = newSubject();
    const { isError, structured } = await remember(subject, args);
    expect(isError).toBe(true);
    expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(message) } });
    expect(await rows(subject)).toEqual([]);
  });

  it('counts characters, not UTF-16 units or bytes', async () => {
    const subject = newSubject();
    const emoji = '🧠'.repeat(16000);
    expect((await remember(subject, { text: emoji, dedup_policy: 'insert' })).isError).toBe(false);
    const tooMany = await remember(subject, { text: `${emoji}🧠`, dedup_policy: 'insert' });
    expect(tooMany.structured).toMatchObject({ error: { code: 'INVALID_INPUT' } });
  });

  it.each([
    ['an OpenAI key', 'my key is sk-proj-Q3rT9vXb2LmN8pKd4WfYh6ZcJ1sAeUoR5tGi7HnBqV0xMz'],
    ['a JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['a PEM private key', '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----'],
    ['an AWS access key id', 'aws key AKIAIOSFODNN7EXAMPLQ for prod'],
  ])('rejects %s with SECRET_REJECTED, never echoing it', async (_name, text) => {
    const subject = newSubject();
    const { isError, structured } = await remember(subject, { text });
    expect(isError).toBe(true);
    expect((structured.error as { code: string }).code).toBe('SECRET_REJECTED');
    expect(JSON.stringify(structured)).not.toContain(text.slice(10, 30));
    expect(await rows(subject)).toEqual([]);
  });

  it('accepts ordinary text that mentions secrets, hashes, UUIDs and order numbers', async () => {
    const subject = newSubject();
    for (const text of [
      'The user forgot their password again and wants a password manager recommendation',
      'The fix landed in commit 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b',
      'Order 550e8400-e29b-41d4-a716-446655440000 was shipped',
      'Amazon order #123-4567890-1234567 arrives Friday',
    ]) {
      expect((await remember(subject, { text, dedup_policy: 'insert' })).isError, text).toBe(false);
    }
    expect(await rows(subject)).toHaveLength(4);
  });

  it('lists near-duplicates under ask (the default) and still inserts', async () => {
    const subject = newSubject();
    const first = await remember(subject, { text: 'The user is allergic to penicillin', tags: ['health'] });
    const second = await remember(subject, { text: 'The user has a penicillin allergy' });
    expect(second.structured).toMatchObject({ ok: true, message: expect.stringMatching(/^Remembered; 1 similar memory exists/) });
    expect(second.structured.memory_id).not.toBe(first.structured.memory_id);
    const near = second.structured.near_duplicates as Record<string, unknown>[];
    expect(near).toEqual([
      {
        memory_id: first.structured.memory_id,
        text: 'The user is allergic to penicillin',
        similarity: expect.any(Number),
        tags: ['health'],
        created_at: expect.any(String),
        last_confirmed_at: expect.any(String),
      },
    ]);
    expect(near[0]!.similarity).toBeGreaterThanOrEqual(server.config.memory.nearDuplicateThreshold);
    expect(await rows(subject)).toHaveLength(2);
  });

  it('lists under ask a memory that says the same rare words, however far its meaning vector is', async () => {
    const subject = newSubject();
    const stored = await remember(subject, { text: "The user's booking reference for the Lisbon hotel is QX7T42." });
    await remember(subject, { text: 'The user enjoys long walks on the beach at sunset.', dedup_policy: 'insert' });
    const asked = await remember(subject, { text: 'Lisbon hotel booking ref: QX7T42.' });
    const near = asked.structured.near_duplicates as { memory_id: number; similarity: number }[];
    expect(near.map((item) => item.memory_id)).toEqual([stored.structured.memory_id]);
    // Found by its words, not its vector: below where the vectors' candidates end (NearDuplicateThreshold − 0.15).
    expect(near[0]!.similarity).toBeLessThan(server.config.memory.nearDuplicateThreshold - 0.15);
    expect(near[0]!.similarity).toBeGreaterThanOrEqual(0);
  });

  it('lists under ask one of the few nearest below the margin when it also shares a word: a paraphrase the model scores low', async () => {
    const subject = newSubject();
    const stored = await remember(subject, { text: "The user's husband is called Karim." });
    // Karim is named often, so a search by the words alone ranks other memories first.
    for (const text of ["Karim's sister Leila lives in Lyon.", 'Karim plays the oud at weddings.', 'Karim Haddad from work sits opposite the user.', 'Karim takes the bins out on Thursdays.']) {
      await remember(subject, { text, dedup_policy: 'insert' });
    }
    const unrelated = await remember(subject, { text: 'The user enjoys long walks on the beach at sunset.', dedup_policy: 'insert' });
    const asked = await remember(subject, { text: "I'm married to Karim." });
    const near = asked.structured.near_duplicates as { memory_id: number; similarity: number }[];
    const listed = near.find((item) => item.memory_id === stored.structured.memory_id);
    expect(listed).toBeDefined();
    expect(listed!.similarity).toBeLessThan(server.config.memory.nearDuplicateThreshold - 0.15);
    expect(near.map((item) => item.memory_id)).not.toContain(unrelated.structured.memory_id);
    expect(near.length).toBeLessThanOrEqual(5);
  });

  it('skips the same fact under skip_if_near and returns the existing id', async () => {
    const subject = newSubject();
    const first = await remember(subject, { text: 'The user is allergic to penicillin' });
    for (const text of ['The user is allergic to penicillin', 'User is allergic to penicillin.', 'the user is allergic to Penicillin!']) {
      const again = await remember(subject, { text, dedup_policy: 'skip_if_near' });
      expect(again.structured).toMatchObject({ ok: true, memory_id: first.structured.memory_id, message: 'Already remembered' });
      expect((again.structured.near_duplicates as unknown[]).length).toBeGreaterThanOrEqual(1);
    }
    expect(await rows(subject)).toHaveLength(1);
  });

  it.each([
    ['The user goes by night-heron on Mastodon.', "The user's Mastodon handle is night-heron."],
    ["The user's lease ends on March 3.", "The user's lease ends on the 3rd of March."],
    ['The user was stung by a wasp at the picnic.', 'A wasp stung the user at the picnic.'],
  ])('recognises the same fact reworded: %s / %s', async (existing, incoming) => {
    const subject = newSubject();
    const first = await remember(subject, { text: existing });
    await remember(subject, { text: 'The user is learning Mandarin', dedup_policy: 'insert' });
    const asked = await remember(subject, { text: incoming });
    expect((asked.structured.near_duplicates as { memory_id: number }[])[0]?.memory_id).toBe(first.structured.memory_id);
    await server.call(await server.token(subject), 'forget', { memory_id: asked.structured.memory_id });
    const skipped = await remember(subject, { text: incoming, dedup_policy: 'skip_if_near' });
    expect(skipped.structured).toMatchObject({ ok: true, memory_id: first.structured.memory_id, message: 'Already remembered' });
    expect(await rows(subject)).toHaveLength(2);
  });

  it.each([
    ["The user's blood type is O negative", "The partner's blood type is A positive"],
    ["The user's class starts at 7 pm", "The user's class starts at 7 am"],
    ["The user's son plays chess", "The user's daughter plays chess"],
    ['The user speaks Welsh', "The user's partner speaks Welsh"],
    ["The user's strep test came back positive", "The user's strep test came back negative"],
    ['The user has two children', 'The user has three children'],
    ['The user was born in 1985', 'The user was born in 1987'],
    ['The user lives in Berlin', 'The user lives in Munich'],
    ['The user likes cats', 'The user does not like cats'],
    ['The user works at Google as an engineer', 'The user works at Google as a manager'],
    ['Sam owes the user £50', 'The user owes Sam £50'],
    ["The user's dog chases the postman's cat", "The postman's cat chases the user's dog"],
    ["Theo is the user's son and Mia is the user's daughter", "Mia is the user's son and Theo is the user's daughter"],
    ['The user goes by moss-lantern online', 'The user goes by moss-lanterns online'],
    ["The user's weekday alarm is 6:40 and the weekend one is 8:00", "The user's weekday alarm is 8:00 and the weekend one is 6:40"],
    ["The user's boss is Sam and the user's mentor is Kim", "The user's boss is Kim and the user's mentor is Sam"],
  ])('never skips a different fact on the same topic: %s / %s', async (existing, incoming) => {
    const subject = newSubject();
    await remember(subject, { text: existing });
    const result = await remember(subject, { text: incoming, dedup_policy: 'skip_if_near' });
    expect(result.structured.message).not.toBe('Already remembered');
    expect(await rows(subject)).toHaveLength(2);
  });

  it('lists the similar memory it did not skip under skip_if_near, as its message says', async () => {
    const subject = newSubject();
    const first = await remember(subject, { text: 'The user takes 20 mg of omeprazole daily' });
    const second = await remember(subject, { text: 'The user takes 40 mg of omeprazole daily', dedup_policy: 'skip_if_near' });
    expect(second.structured.message).toMatch(/^Remembered; 1 similar memory exists/);
    expect(second.structured.near_duplicates).toEqual([expect.objectContaining({ memory_id: first.structured.memory_id })]);
    expect(await rows(subject)).toHaveLength(2);
  });

  it('skips the check entirely under insert', async () => {
    const subject = newSubject();
    await remember(subject, { text: 'The user drinks oat milk' });
    const again = await remember(subject, { text: 'The user drinks oat milk', dedup_policy: 'insert' });
    expect(again.structured).toEqual({ ok: true, memory_id: expect.any(Number), space: { id: 'personal', name: 'Personal' }, message: 'Remembered' });
    expect(await rows(subject)).toHaveLength(2);
  });

  it('does not compare with expired memories or other subjects', async () => {
    const subject = newSubject();
    const other = newSubject();
    await remember(other, { text: 'The user plays the cello' });
    const first = await remember(subject, { text: 'The user plays the cello' });
    expect(first.structured.near_duplicates).toEqual([]);
    await server.service.db.withSubject(subject, 'inspecting rows', (trx) =>
      sql`update memories set expires_at = now() - interval '1 minute' where subject = ${subject}`.execute(trx),
    );
    const second = await remember(subject, { text: 'The user plays the cello', dedup_policy: 'skip_if_near' });
    expect(second.structured.message).toBe('Remembered');
    expect(second.structured.memory_id).not.toBe(first.structured.memory_id);
  });

  it('reports tombstones near the new text in previously_corrected', async () => {
    const subject = newSubject();
    const old = await remember(subject, { text: 'The user lives in Lisbon' });
    const replacement = await remember(subject, { text: 'The user moved to Porto in 2025', dedup_policy: 'insert' });
    // Tombstone the old memory the way correct does (the tools that do it are covered in their own tests).
    await server.service.db.withSubject(subject, 'inspecting rows', async (trx) => {
      await sql`
        insert into tombstones (memory_id, subject, text, tags, embedding, embedding_model, embedding_dimensions, reason, replaced_by, memory_created_at)
        select id, subject, text, tags, embedding, embedding_model, embedding_dimensions, 'corrected', ${replacement.structured.memory_id as number}, created_at
          from memories where id = ${old.structured.memory_id as number}`.execute(trx);
      await sql`delete from memories where id = ${old.structured.memory_id as number}`.execute(trx);
    });
    const again = await remember(subject, { text: 'The user lives in Lisbon' });
    expect(again.structured.previously_corrected).toEqual([
      {
        memory_id: old.structured.memory_id,
        text: 'The user lives in Lisbon',
        reason: 'corrected',
        replaced_by: replacement.structured.memory_id,
        similarity: expect.any(Number),
        tombstoned_at: expect.any(String),
      },
    ]);
    expect(again.structured.message).toMatch(/previously_corrected/);
    const unrelated = await remember(subject, { text: 'The user collects vinyl records' });
    expect(unrelated.structured).not.toHaveProperty('previously_corrected');
  });

  it('lets only one of many concurrent identical skip_if_near calls insert', async () => {
    const subject = newSubject();
    const token = await server.token(subject);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => server.call(token, 'remember', { text: 'The user is left-handed', dedup_policy: 'skip_if_near' })),
    );
    const ids = new Set(results.map((result) => result.structured.memory_id));
    expect(ids.size).toBe(1);
    expect(results.filter((result) => result.structured.message === 'Remembered')).toHaveLength(1);
    expect(await rows(subject)).toHaveLength(1);
  });

  it('rolls back a write that fails halfway with DATABASE_ERROR, storing nothing', async () => {
    const subject = newSubject();
    // Break the step after the insert (the tombstone lookup) for this schema only.
    await server.admin('alter table tombstones rename to tombstones_away');
    try {
      const { isError, structured } = await remember(subject, { text: 'The user owns a red bicycle' });
      expect(isError).toBe(true);
      expect(structured).toEqual({ ok: false, error: { code: 'DATABASE_ERROR', message: expect.stringMatching(/nothing was changed/) } });
      expect(JSON.stringify(structured)).not.toContain('bicycle');
    } finally {
      await server.admin('alter table tombstones_away rename to tombstones');
    }
    expect(await rows(subject)).toEqual([]);
  });
});
