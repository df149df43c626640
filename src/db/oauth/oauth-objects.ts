import { sql } from 'kysely';
import type { DbTransaction } from '../schema.js';

/**
 * All SQL of oauth_objects (migration 0007): the built-in authorization server's objects, one state-file
 * generation each. Run inside DatabaseHandle.withAuthorizationServer; times are the database's, so that every
 * process reads expiry alike. Ids arrive already hashed.
 */
export interface OAuthObjectKey {
  readonly generation: string;
  readonly kind: string;
  readonly id: string;
}

export interface OAuthObjectWrite extends OAuthObjectKey {
  readonly payload: Record<string, unknown>;
  readonly uid: string | undefined;
  readonly grantId: string | undefined;
  readonly address: string | undefined;
  readonly expiresInSeconds: number;
}

const expiresIn = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

/** Inserts or replaces an object; a replaced one keeps its address, creation and last use. */
export async function upsertObject(trx: DbTransaction, object: OAuthObjectWrite): Promise<void> {
  await trx
    .insertInto('oauth_objects')
    .values({
      generation: object.generation,
      kind: object.kind,
      id: object.id,
      payload: JSON.stringify(object.payload),
      uid: object.uid ?? null,
      grant_id: object.grantId ?? null,
      address: object.address ?? null,
      expires_at: expiresIn(object.expiresInSeconds),
    })
    .onConflict((conflict) =>
      conflict.columns(['generation', 'kind', 'id']).doUpdateSet((excluded) => ({
        payload: excluded.ref('excluded.payload'),
        uid: excluded.ref('excluded.uid'),
        grant_id: excluded.ref('excluded.grant_id'),
        expires_at: excluded.ref('excluded.expires_at'),
      })),
    )
    .execute();
}

/** The payload of a live (unexpired) object. */
export async function findObject(trx: DbTransaction, key: OAuthObjectKey): Promise<Record<string, unknown> | undefined> {
  const row = await trx
    .selectFrom('oauth_objects')
    .select('payload')
    .where('generation', '=', key.generation)
    .where('kind', '=', key.kind)
    .where('id', '=', key.id)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return row?.payload;
}

export async function findObjectByUid(
  trx: DbTransaction,
  generation: string,
  kind: string,
  uid: string,
): Promise<Record<string, unknown> | undefined> {
  const row = await trx
    .selectFrom('oauth_objects')
    .select('payload')
    .where('generation', '=', generation)
    .where('kind', '=', kind)
    .where('uid', '=', uid)
    .where('expires_at', '>', sql<Date>`now()`)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.payload;
}

/** Marks a code or token used (oidc-provider's `consumed`, epoch seconds); returns its payload. */
export async function consumeObject(trx: DbTransaction, key: OAuthObjectKey): Promise<Record<string, unknown> | undefined> {
  const row = await trx
    .updateTable('oauth_objects')
    .set({ payload: sql`payload || jsonb_build_object('consumed', floor(extract(epoch from now()))::bigint)` })
    .where('generation', '=', key.generation)
    .where('kind', '=', key.kind)
    .where('id', '=', key.id)
    .returning('payload')
    .executeTakeFirst();
  return row?.payload;
}

export async function destroyObject(trx: DbTransaction, key: OAuthObjectKey): Promise<void> {
  await trx
    .deleteFrom('oauth_objects')
    .where('generation', '=', key.generation)
    .where('kind', '=', key.kind)
    .where('id', '=', key.id)
    .execute();
}

export async function destroyObjectsOfGrant(trx: DbTransaction, generation: string, kind: string, grantId: string): Promise<void> {
  await trx
    .deleteFrom('oauth_objects')
    .where('generation', '=', generation)
    .where('kind', '=', kind)
    .where('grant_id', '=', grantId)
    .execute();
}

/**
 * Deletes what belongs to an account, in every generation: its sign-in sessions, grants, codes, refresh tokens
 * and sign-ins in progress; with `sessionId` (already hashed), only that session. Returns how many.
 */
export async function destroyObjectsOfAccount(trx: DbTransaction, accountId: string, sessionId?: string): Promise<number> {
  const only = sessionId === undefined ? sql`` : sql`and kind = 'Session' and id = ${sessionId}`;
  const result = await sql`
    delete from oauth_objects
     where (payload->>'accountId' = ${accountId} or payload->'session'->>'accountId' = ${accountId}) ${only}`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * A client obtained a token: it now expires `ttlSeconds` after its last use instead of soon after registration.
 * Written at most once a day per client, so refreshing does not rewrite the row every time.
 */
export async function markClientUsed(trx: DbTransaction, key: OAuthObjectKey, ttlSeconds: number): Promise<void> {
  await trx
    .updateTable('oauth_objects')
    .set({ used_at: sql<Date>`now()`, expires_at: expiresIn(ttlSeconds) })
    .where('generation', '=', key.generation)
    .where('kind', '=', key.kind)
    .where('id', '=', key.id)
    .where((eb) => eb.or([eb('used_at', 'is', null), eb('used_at', '<', sql<Date>`now() - interval '1 day'`)]))
    .execute();
}

/**
 * Serialises, until the transaction ends, the writers of one kind of object in one generation: a capped kind's
 * insert-count-evict must not interleave, or two writers each see the cap reached by the other's row and neither
 * evicts. The key space is apart from the per-subject memory locks (a second key of the two-int form).
 */
export async function lockKind(trx: DbTransaction, generation: string, kind: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('oauth_objects'), hashtext(${`${generation}/${kind}`}))`.execute(trx);
}

/** Objects of one kind in a generation (expired ones not yet swept included); `address` and `live` narrow it. */
export async function countObjects(
  trx: DbTransaction,
  generation: string,
  kind: string,
  options: { address?: string; live?: boolean } = {},
): Promise<number> {
  let query = trx
    .selectFrom('oauth_objects')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('generation', '=', generation)
    .where('kind', '=', kind);
  if (options.address !== undefined) query = query.where('address', '=', options.address);
  if (options.live === true) query = query.where('expires_at', '>', sql<Date>`now()`);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Deletes the `count` oldest objects of a kind (with `neverUsed`, only clients that never obtained a token), so
 * that their number stays bounded however fast they are made. Returns how many were deleted.
 */
export async function deleteOldest(
  trx: DbTransaction,
  generation: string,
  kind: string,
  count: number,
  options: { neverUsed?: boolean } = {},
): Promise<number> {
  if (count <= 0) return 0;
  const unused = options.neverUsed === true ? sql`and used_at is null` : sql``;
  const result = await sql`
    delete from oauth_objects
     where generation = ${generation} and kind = ${kind}
       and id in (select id from oauth_objects
                   where generation = ${generation} and kind = ${kind} ${unused}
                   order by created_at, id
                   limit ${count})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes up to `limit` expired objects and objects of other generations; returns how many. */
export async function sweepObjects(trx: DbTransaction, generation: string, limit: number): Promise<number> {
  const result = await sql`
    delete from oauth_objects
     where (generation, kind, id) in (select generation, kind, id from oauth_objects
                                       where expires_at <= now() or generation <> ${generation}
                                       limit ${limit})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
