import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle, Principal } from '../../src/db/open-database.js';
import type { DbTransaction } from '../../src/db/schema.js';
import { ServiceError } from '../../src/errors.js';
import { engines } from '../helpers/engines.js';
import { closeTestDatabase, openTestDatabase } from '../helpers/shared.js';

/**
 * Row-level security alone keeps spaces apart (migration 0020): every statement here is raw SQL run through
 * db.withSubject, as the service's own role (on PGlite the plain role memory_service_rls, which row-level
 * security binds), bypassing every check of the application code. What a principal may see and change is
 * decided by memberships in the database, read anew by each statement.
 */
const stamp = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const OWNER = `olivia-${stamp}`;
const WRITER = `walter-${stamp}`;
const READER = `rita-${stamp}`;
const OUTSIDER = `nora-${stamp}`;
const GROUPIE = `gina-${stamp}`;
const key = (tag: string) => `space:${(tag + stamp).padEnd(24, '0').slice(0, 24)}`;
const SHARED = key('shared');
/** Shared with a group claim only, as writer. */
const GROUP_SPACE = key('group');
const TEAM = `team-${stamp}`;
const CREW = `crew-${stamp}`;

/** The space-keyed tables, each with the rows of SHARED the fixture put there. */
const SPACE_TABLES = ['memories', 'tombstones', 'memory_restatements', 'memory_terms', 'memory_recalls', 'subject_stats'] as const;

const vector = sql`'[1,0,0]'::vector`;
const insertMemory = (space: string, text: string) =>
  sql<{ id: string }>`insert into memories (subject, text, embedding, embedding_model, embedding_dimensions) values (${space}, ${text}, ${vector}, 'm', 3) returning id`;
/** An insert of one row of `table` keyed by `space` (memory_id: a memory of that space, where the table needs one). */
function insertInto(table: (typeof SPACE_TABLES)[number], space: string, memoryId: number): RawBuilder<unknown> {
  switch (table) {
    case 'memories':
      return insertMemory(space, 'planted memory');
    case 'tombstones':
      return sql`insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
                 values (${memoryId + 1_000_000}, ${space}, 'planted tombstone', ${vector}, 'm', 3, 'forgotten', now())`;
    case 'memory_restatements':
      return sql`insert into memory_restatements (memory_id, subject, text, embedding, embedding_model, embedding_dimensions)
                 values (${memoryId}, ${space}, 'planted restatement', ${vector}, 'm', 3)`;
    case 'memory_terms':
      return sql`insert into memory_terms (subject, lexeme, memory_id, rank) values (${space}, ${`planted${stamp}`}, ${memoryId}, 1)`;
    case 'memory_recalls':
      // A count is only ever of a memory of the same space: the row names the space's own memory.
      return sql`insert into memory_recalls (memory_id, subject, recalls) values (${memoryId}, ${space}, 1)
                 on conflict (memory_id) do update set recalls = memory_recalls.recalls + 1`;
    case 'subject_stats':
      // The space's own row exists already (its memories' trigger made it): a row under the key is a conflict, so
      // a fresh key of the same form stands in for "another row under this key" where the key is unknown.
      return sql`insert into subject_stats (subject, memories) values (${space}, 0) on conflict (subject) do update set memories = subject_stats.memories + 1`;
  }
}

class Rollback extends Error {}

describe.each(engines)('row-level security of spaces on %s', (engine) => {
  let db: DatabaseHandle;
  let sharedMemory: number;
  let personalMemory: number;

  /** Runs `fn` for `who` and rolls everything back, returning what fn returned. */
  async function rolledBack<T>(who: string | Principal, fn: (trx: DbTransaction) => Promise<T>): Promise<T> {
    let result: T | undefined;
    await expect(
      db.withSubject(who, 'probing', async (trx) => {
        result = await fn(trx);
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    return result as T;
  }
  const rows = async (who: string | Principal, query: RawBuilder<unknown>): Promise<number> =>
    rolledBack(who, async (trx) => Number((await query.execute(trx)).rows.length));
  const affected = async (who: string | Principal, query: RawBuilder<unknown>): Promise<number> =>
    rolledBack(who, async (trx) => Number((await query.execute(trx)).numAffectedRows ?? 0n));
  /** `query` as `who` fails on row-level security, and nothing it did stays. */
  async function refused(who: string | Principal, query: RawBuilder<unknown>): Promise<void> {
    const error = await db.withSubject(who, 'probing', (trx) => query.execute(trx)).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error, 'the statement was let through').toBeInstanceOf(ServiceError);
    expect(String((error as ServiceError).cause)).toMatch(/row-level security/);
  }
  const ofShared = (table: string) => sql`select * from ${sql.table(table)} where subject = ${SHARED}`;

  beforeAll(async () => {
    db = await openTestDatabase(engine);
    const ids = await db.withAllSubjects('seeding', async (trx) => {
      await sql`insert into spaces (id, name, owner, external_group, external_role) values (${SHARED}, 'Household', ${OWNER}, ${TEAM}, 'reader'),
                                                                                    (${GROUP_SPACE}, 'Crew', ${OWNER}, ${CREW}, 'writer')`.execute(trx);
      await sql`insert into space_members (space_id, member, role) values (${SHARED}, ${WRITER}, 'writer'), (${SHARED}, ${READER}, 'reader')`.execute(trx);
      const shared = Number((await insertMemory(SHARED, 'The boiler is serviced every October').execute(trx)).rows[0]!.id);
      const personal = Number((await insertMemory(OWNER, 'Olivia keeps her passport in the blue drawer').execute(trx)).rows[0]!.id);
      await insertMemory(GROUP_SPACE, 'The crew meets on Mondays').execute(trx);
      await sql`insert into tombstones (memory_id, subject, text, embedding, embedding_model, embedding_dimensions, reason, memory_created_at)
                values (${shared + 500_000}, ${SHARED}, 'The boiler was serviced in May', ${vector}, 'm', 3, 'corrected', now())`.execute(trx);
      await sql`insert into memory_restatements (memory_id, subject, text, embedding, embedding_model, embedding_dimensions)
                values (${shared}, ${SHARED}, 'Boiler service: October', ${vector}, 'm', 3)`.execute(trx);
      await sql`insert into memory_recalls (memory_id, subject, recalls) values (${shared}, ${SHARED}, 3), (${personal}, ${OWNER}, 1)`.execute(trx);
      return { shared, personal };
    });
    sharedMemory = ids.shared;
    personalMemory = ids.personal;
  });
  afterAll(async () => {
    await closeTestDatabase(db);
  });

  it('shows a non-member none of a space\'s rows, in any table, while its members see them', async () => {
    for (const table of SPACE_TABLES) {
      for (const member of [OWNER, WRITER, READER]) expect(await rows(member, ofShared(table)), `${member} in ${table}`).toBeGreaterThan(0);
      expect(await rows(OUTSIDER, ofShared(table)), table).toBe(0);
      expect(await rows(OUTSIDER, sql`select * from ${sql.table(table)}`), table).toBe(0);
    }
    expect(await rows(READER, sql`select * from spaces where id = ${SHARED}`)).toBe(1);
    expect(await rows(READER, sql`select * from space_members where space_id = ${SHARED}`)).toBe(2);
    expect(await rows(OUTSIDER, sql`select * from spaces`)).toBe(0);
    expect(await rows(OUTSIDER, sql`select * from space_members`)).toBe(0);
    // Nor does a member of one space see another they are not in, nor anyone's personal rows.
    expect(await rows(READER, sql`select * from spaces where id = ${GROUP_SPACE}`)).toBe(0);
    expect(await rows(READER, sql`select * from memories where subject = ${GROUP_SPACE} or subject = ${OWNER}`)).toBe(0);
    expect(await rows(WRITER, sql`select * from memory_recalls where memory_id = ${personalMemory}`)).toBe(0);
  });

  it('lets a reader select but refuses their inserts, and their updates and deletes change nothing', async () => {
    for (const table of SPACE_TABLES) {
      if (table === 'memory_recalls') continue;
      await refused(READER, insertInto(table, SHARED, sharedMemory));
    }
    expect(await affected(READER, sql`update memories set text = 'The boiler is never serviced' where subject = ${SHARED}`)).toBe(0);
    expect(await affected(READER, sql`delete from memories where subject = ${SHARED}`)).toBe(0);
    expect(await affected(READER, sql`delete from tombstones where subject = ${SHARED}`)).toBe(0);
    expect(await affected(READER, sql`delete from memory_restatements where subject = ${SHARED}`)).toBe(0);
    expect(await affected(READER, sql`update memory_terms set rank = 0 where subject = ${SHARED}`)).toBe(0);
    expect(await affected(READER, sql`update subject_stats set memories = 0 where subject = ${SHARED}`)).toBe(0);
    // A reader's update cannot move a row either, not even into a space they may write (their personal one).
    expect(await affected(READER, sql`update memories set subject = ${READER} where subject = ${SHARED}`)).toBe(0);
    // Readers count their recalls (the brief's "often recalled"): the one table they write, and only counts of the
    // space's own memories: not a count of another space's memory planted under a key they may read.
    expect(await affected(READER, sql`update memory_recalls set recalls = recalls + 1 where subject = ${SHARED}`)).toBe(1);
    await refused(READER, sql`insert into memory_recalls (memory_id, subject, recalls) values (${sharedMemory + 2_000_000}, ${SHARED}, 1)`);
    await refused(READER, sql`insert into memory_recalls (memory_id, subject, recalls) values (${sharedMemory + 2_000_000}, ${READER}, 1)`);
    expect(await affected(READER, sql`delete from memory_recalls where subject = ${SHARED}`)).toBe(0);
    const texts = await db.withAllSubjects('checking', async (trx) => (await sql<{ text: string }>`select text from memories where subject = ${SHARED}`.execute(trx)).rows);
    expect(texts).toEqual([{ text: 'The boiler is serviced every October' }]);
  });

  it('lets a writer (and the owner) insert, update and delete in the space', async () => {
    for (const who of [WRITER, OWNER]) {
      await rolledBack(who, async (trx) => {
        for (const table of SPACE_TABLES) await insertInto(table, SHARED, sharedMemory).execute(trx);
        expect(Number((await sql`update memories set text = 'The boiler is serviced every November' where id = ${sharedMemory}`.execute(trx)).numAffectedRows)).toBe(1);
        expect(Number((await sql`delete from memory_restatements where subject = ${SHARED}`.execute(trx)).numAffectedRows)).toBe(2);
        expect(Number((await sql`delete from memories where subject = ${SHARED}`.execute(trx)).numAffectedRows)).toBe(2);
        return undefined;
      });
    }
  });

  it('lets only the owner rename, share or delete a space; a member may only leave', async () => {
    for (const member of [WRITER, READER, OUTSIDER]) {
      expect(await affected(member, sql`update spaces set name = 'Mine now' where id = ${SHARED}`), member).toBe(0);
      expect(await affected(member, sql`update spaces set owner = ${member} where id = ${SHARED}`), member).toBe(0);
      expect(await affected(member, sql`delete from spaces where id = ${SHARED}`), member).toBe(0);
      expect(await affected(member, sql`update space_members set role = 'writer' where space_id = ${SHARED}`), member).toBe(0);
      await refused(member, sql`insert into space_members (space_id, member, role) values (${SHARED}, ${OUTSIDER + member}, 'writer')`);
    }
    // A member removes no one else, but may remove themselves.
    expect(await affected(READER, sql`delete from space_members where space_id = ${SHARED} and member = ${WRITER}`)).toBe(0);
    expect(await affected(WRITER, sql`delete from space_members where space_id = ${SHARED}`)).toBe(1);
    expect(await affected(READER, sql`delete from space_members where space_id = ${SHARED} and member = ${READER}`)).toBe(1);
    // Nor may anyone make a space for someone else.
    await refused(OUTSIDER, sql`insert into spaces (id, name, owner) values (${key('forged')}, 'Forged', ${OWNER})`);

    await rolledBack(OWNER, async (trx) => {
      expect(Number((await sql`update spaces set name = 'Home' where id = ${SHARED}`.execute(trx)).numAffectedRows)).toBe(1);
      await sql`insert into space_members (space_id, member, role) values (${SHARED}, ${OUTSIDER}, 'reader')`.execute(trx);
      expect(Number((await sql`update space_members set role = 'writer' where space_id = ${SHARED} and member = ${READER}`.execute(trx)).numAffectedRows)).toBe(1);
      expect(Number((await sql`delete from space_members where space_id = ${SHARED} and member = ${WRITER}`.execute(trx)).numAffectedRows)).toBe(1);
      expect(Number((await sql`delete from spaces where id = ${SHARED}`.execute(trx)).numAffectedRows)).toBe(1);
      return undefined;
    });
    expect(await rows(OWNER, sql`select * from spaces where id = ${SHARED} and name = 'Household'`)).toBe(1);
  });

  it('narrows a token limited to some spaces to those, the personal one included', async () => {
    const sharedOnly: Principal = { subject: OWNER, spaceLimit: [SHARED] };
    const personalOnly: Principal = { subject: OWNER, spaceLimit: [OWNER] };
    const none: Principal = { subject: OWNER, spaceLimit: [] };
    expect(await rows(OWNER, sql`select * from memories where subject in (${SHARED}, ${OWNER}, ${GROUP_SPACE})`)).toBe(3);
    expect(await rows(sharedOnly, sql`select * from memories`)).toBe(1);
    expect(await rows(sharedOnly, sql`select * from memories where subject = ${OWNER}`)).toBe(0);
    expect(await rows(sharedOnly, sql`select * from spaces`)).toBe(1);
    expect(await rows(personalOnly, sql`select * from memories`)).toBe(1);
    expect(await rows(personalOnly, sql`select * from memories where subject = ${OWNER}`)).toBe(1);
    expect(await rows(personalOnly, sql`select * from spaces`)).toBe(0);
    expect(await rows(personalOnly, sql`select * from memory_recalls`)).toBe(1);
    for (const table of SPACE_TABLES) expect(await rows(none, sql`select * from ${sql.table(table)}`), table).toBe(0);
    // Writes too: the owner's own spaces outside the limit are out of reach.
    await refused(sharedOnly, insertMemory(OWNER, 'written past the limit'));
    await refused(personalOnly, insertMemory(SHARED, 'written past the limit'));
    expect(await affected(sharedOnly, sql`update spaces set name = 'Crew 2' where id = ${GROUP_SPACE}`)).toBe(0);
    expect(await affected(personalOnly, sql`delete from spaces where id = ${SHARED}`)).toBe(0);
  });

  it('grants the space\'s external role to a principal whose group claim names its group', async () => {
    expect(await rows(GROUPIE, sql`select * from memories`)).toBe(0);
    expect(await rows({ subject: GROUPIE, groups: ['someone-else'] }, sql`select * from memories`)).toBe(0);
    const team = { subject: GROUPIE, groups: [TEAM] };
    expect(await rows(team, ofShared('memories'))).toBe(1);
    expect(await rows(team, sql`select * from memories where subject = ${GROUP_SPACE}`)).toBe(0);
    await refused(team, insertMemory(SHARED, 'a reader by group writes'));
    const crew = { subject: GROUPIE, groups: ['unrelated', CREW] };
    expect(await rows(crew, sql`select * from memories where subject = ${GROUP_SPACE}`)).toBe(1);
    expect(await rows(crew, ofShared('memories'))).toBe(0);
    expect(await affected(crew, insertMemory(GROUP_SPACE, 'a writer by group writes'))).toBe(1);
    // A group grants no ownership.
    expect(await affected(crew, sql`update spaces set name = 'Ours' where id = ${GROUP_SPACE}`)).toBe(0);
  });

  it('takes a subject and a group claim full of quotes and backslashes verbatim, and grants them nothing', async () => {
    // The settings travel as escaped literals (open-database.ts): a claim that tries to close the literal stays text.
    const escape = `x', true), set_config('memory_service.all_subjects', 'on', true), set_config('a.b', E'\\\\'' --`;
    const hostile: Principal = { subject: escape, groups: [`${TEAM}' , '${CREW}`, escape] };
    for (const table of SPACE_TABLES) expect(await rows(hostile, sql`select * from ${sql.table(table)}`), table).toBe(0);
    const settings = await db.withSubject(hostile, 'reading', async (trx) =>
      (await sql<{ subject: string; everyone: string }>`select current_setting('memory_service.subject') as subject, current_setting('memory_service.all_subjects') as everyone`.execute(trx)).rows[0]!,
    );
    expect(settings).toEqual({ subject: escape, everyone: 'off' });
  });

  it('refuses rows under another subject\'s key or an unknown space\'s key', async () => {
    for (const table of SPACE_TABLES) {
      await refused(OUTSIDER, insertInto(table, OWNER, personalMemory));
      await refused(OUTSIDER, insertInto(table, key('unknown'), personalMemory));
      await refused(WRITER, insertInto(table, GROUP_SPACE, personalMemory));
    }
    // Nor move a row of theirs there.
    await db.withSubject(OUTSIDER, 'seeding', (trx) => insertMemory(OUTSIDER, 'Nora\'s own').execute(trx));
    await refused(OUTSIDER, sql`update memories set subject = ${SHARED} where subject = ${OUTSIDER}`);
    await refused(WRITER, sql`update memories set subject = ${OWNER} where subject = ${SHARED}`);
  });

  it('ends a removed member\'s access with the next statement', async () => {
    const member = `mia-${stamp}`;
    await db.withSubject(OWNER, 'sharing', (trx) => sql`insert into space_members (space_id, member, role) values (${SHARED}, ${member}, 'writer')`.execute(trx));
    expect(await rows(member, ofShared('memories'))).toBe(1);
    const remove = () => db.withSubject(OWNER, 'removing', (trx) => sql`delete from space_members where space_id = ${SHARED} and member = ${member}`.execute(trx));
    if (engine === 'postgres') {
      // In one transaction of theirs that began while they were a member (read committed: each statement anew).
      const seen = await rolledBack(member, async (trx) => {
        const before = (await ofShared('memories').execute(trx)).rows.length;
        await remove();
        const after = (await ofShared('memories').execute(trx)).rows.length;
        const write = await insertMemory(SHARED, 'written after removal').execute(trx).then(
          () => 'written',
          (error: unknown) => String(error),
        );
        return { before, after, write };
      });
      expect(seen.before).toBe(1);
      expect(seen.after).toBe(0);
      expect(seen.write).toMatch(/row-level security/);
    } else {
      // PGlite has one connection: transactions run one after another.
      await remove();
      expect(await rows(member, ofShared('memories'))).toBe(0);
      await refused(member, insertMemory(SHARED, 'written after removal'));
    }
    for (const table of SPACE_TABLES) expect(await rows(member, ofShared(table)), table).toBe(0);
  });

  // The principal's spaces are worked out once a statement and kept for the next while nothing changed (migration
  // 0022): a change of the transaction's own leaves its snapshot as it was, so it must not be missed.
  it('counts a membership or ownership changed in the same transaction from the next statement', async () => {
    const leaver = `lea-${stamp}`;
    await db.withSubject(OWNER, 'sharing', (trx) => sql`insert into space_members (space_id, member, role) values (${SHARED}, ${leaver}, 'writer')`.execute(trx));
    const left = await rolledBack(leaver, async (trx) => {
      const before = (await ofShared('memories').execute(trx)).rows.length;
      await sql`delete from space_members where space_id = ${SHARED} and member = ${leaver}`.execute(trx);
      const after = (await ofShared('memories').execute(trx)).rows.length;
      const write = await insertMemory(SHARED, 'written after leaving').execute(trx).then(
        () => 'written',
        (error: unknown) => String(error),
      );
      return { before, after, write };
    });
    expect(left).toMatchObject({ before: 1, after: 0 });
    expect(left.write).toMatch(/row-level security/);

    const handedOver = await rolledBack(OWNER, async (trx) => {
      const renamed = Number((await sql`update spaces set name = 'Home' where id = ${SHARED}`.execute(trx)).numAffectedRows ?? 0n);
      await sql`update spaces set owner = ${WRITER} where id = ${SHARED}`.execute(trx);
      const renamedAfter = Number((await sql`update spaces set name = 'House' where id = ${SHARED}`.execute(trx)).numAffectedRows ?? 0n);
      return { renamed, renamedAfter };
    });
    expect(handedOver).toEqual({ renamed: 1, renamedAfter: 0 });
  });
});
