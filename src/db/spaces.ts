import { sql } from 'kysely';
import type { DbTransaction } from './schema.js';

export type SpaceRole = 'owner' | 'writer' | 'reader';
export type MemberRole = 'writer' | 'reader';

/** A space the transaction's principal may use, with their role in it (memory_service_space_roles, migration 0020). */
export interface SpaceRow {
  /** The space's key: the subject for a personal space, `space:<id>` for one made to be shared. */
  readonly key: string;
  readonly role: SpaceRole;
  /** Undefined for the personal space (it has no row in `spaces`). */
  readonly name: string | undefined;
  readonly owner: string | undefined;
  readonly externalGroup: string | undefined;
  readonly externalRole: MemberRole | undefined;
  readonly createdAt: Date | undefined;
}

/** Every space the principal may use (within the token's limit), by row-level security's own rule. */
export async function principalSpaces(trx: DbTransaction): Promise<SpaceRow[]> {
  const { rows } = await sql<{
    space: string;
    role: SpaceRole;
    name: string | null;
    owner: string | null;
    external_group: string | null;
    external_role: MemberRole | null;
    created_at: Date | null;
  }>`
    select r.space, r.role, s.name, s.owner, s.external_group, s.external_role, s.created_at
      from memory_service_space_roles() r
      left join spaces s on s.id = r.space
     order by s.created_at nulls first, s.id`.execute(trx);
  return rows.map((row) => ({
    key: row.space,
    role: row.role,
    name: row.name ?? undefined,
    owner: row.owner ?? undefined,
    externalGroup: row.external_group ?? undefined,
    externalRole: row.external_role ?? undefined,
    createdAt: row.created_at ?? undefined,
  }));
}

/** The space a memory (or a restatement) lives in, with the principal's role there; undefined when they may not read it. */
export async function spaceOfRow(trx: DbTransaction, table: 'memories' | 'memory_restatements', id: number): Promise<SpaceRow | undefined> {
  const { rows } = await sql<{ space: string; role: SpaceRole; name: string | null; owner: string | null; created_at: Date | null }>`
    select r.space, r.role, s.name, s.owner, s.created_at
      from ${sql.table(table)} as row
      join memory_service_space_roles() r on r.space = row.subject
      left join spaces s on s.id = r.space
     where row.id = ${id}`.execute(trx);
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    key: row.space,
    role: row.role,
    name: row.name ?? undefined,
    owner: row.owner ?? undefined,
    externalGroup: undefined,
    externalRole: undefined,
    createdAt: row.created_at ?? undefined,
  };
}

/** A shared space's row, if the principal may read it. */
export async function sharedSpace(trx: DbTransaction, key: string): Promise<{ owner: string; externalGroup: { name: string; role: MemberRole } | undefined } | undefined> {
  const row = await trx.selectFrom('spaces').select(['owner', 'external_group', 'external_role']).where('id', '=', key).executeTakeFirst();
  if (row === undefined) return undefined;
  const externalGroup = row.external_group !== null && row.external_role !== null ? { name: row.external_group, role: row.external_role } : undefined;
  return { owner: row.owner, externalGroup };
}

export async function insertSpace(trx: DbTransaction, space: { key: string; name: string; owner: string }): Promise<void> {
  await trx.insertInto('spaces').values({ id: space.key, name: space.name, owner: space.owner }).execute();
}

/** Whether it was renamed (false: not a space the principal owns). */
export async function renameSpace(trx: DbTransaction, key: string, name: string): Promise<boolean> {
  const result = await trx.updateTable('spaces').set({ name }).where('id', '=', key).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setSpaceOwner(trx: DbTransaction, key: string, owner: string): Promise<boolean> {
  const result = await trx.updateTable('spaces').set({ owner }).where('id', '=', key).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setExternalGroup(trx: DbTransaction, key: string, group: { name: string; role: MemberRole } | undefined): Promise<boolean> {
  const result = await trx
    .updateTable('spaces')
    .set({ external_group: group?.name ?? null, external_role: group?.role ?? null })
    .where('id', '=', key)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes the space's row (its members go with it by cascade); its memories are erased by the caller first. */
export async function deleteSpaceRow(trx: DbTransaction, key: string): Promise<boolean> {
  const result = await trx.deleteFrom('spaces').where('id', '=', key).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export interface MemberRow {
  readonly member: string;
  readonly role: MemberRole;
  readonly addedAt: Date;
}

export async function spaceMembers(trx: DbTransaction, key: string): Promise<MemberRow[]> {
  const rows = await trx.selectFrom('space_members').select(['member', 'role', 'added_at']).where('space_id', '=', key).orderBy('added_at').orderBy('member').execute();
  return rows.map((row) => ({ member: row.member, role: row.role, addedAt: row.added_at }));
}

/** Adds the member or changes their role. */
export async function putMember(trx: DbTransaction, key: string, member: string, role: MemberRole): Promise<void> {
  await trx
    .insertInto('space_members')
    .values({ space_id: key, member, role })
    .onConflict((conflict) => conflict.columns(['space_id', 'member']).doUpdateSet({ role }))
    .execute();
}

/** Whether they were a member (false: not, or not a space whose members the principal may remove). */
export async function removeMember(trx: DbTransaction, key: string, member: string): Promise<boolean> {
  const result = await trx.deleteFrom('space_members').where('space_id', '=', key).where('member', '=', member).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The keys of the spaces `owner` owns: erased with them when they delete all their data. */
export async function ownedSpaceKeys(trx: DbTransaction, owner: string): Promise<string[]> {
  const rows = await trx.selectFrom('spaces').select('id').where('owner', '=', owner).execute();
  return rows.map((row) => row.id);
}

/** Ends every membership of `member` (delete all my data). */
export async function removeMemberships(trx: DbTransaction, member: string): Promise<number> {
  const result = await trx.deleteFrom('space_members').where('member', '=', member).executeTakeFirst();
  return Number(result.numDeletedRows);
}
