import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DatabaseHandle } from '../../db/open-database.js';
import {
  consumeObject,
  countObjects,
  lockKind,
  deleteOldest,
  destroyObject,
  destroyObjectsOfGrant,
  findObject,
  findObjectByUid,
  markClientUsed,
  sweepObjects,
  upsertObject,
  type OAuthObjectKey,
} from '../../db/oauth/oauth-objects.js';
import type { DbTransaction } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { AuthorizationServerLimits } from './limits.js';
import type { AuthorizationServerState } from './state-file.js';

/**
 * The client address of the request oidc-provider is handling (as TrustProxy decides it), so that an interaction
 * row records who started it. Set by the routes around every request they hand to oidc-provider.
 */
export const requestAddress = new AsyncLocalStorage<string>();

/**
 * Kinds whose id is a bearer credential: the row is keyed by its hash and the payload is stored without it
 * (`jti`), so the database never holds a usable code or token. Sessions and interactions keep theirs: a session
 * is looked up by `uid` and must know its id.
 */
const CREDENTIAL_KINDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'RegistrationAccessToken',
  'InitialAccessToken',
]);
/** Using one of these means the client obtained a token. */
const TOKEN_KINDS = new Set(['AuthorizationCode', 'RefreshToken']);
/** oidc-provider gives every object a lifetime but clients; this is the longest any other one gets. */
const FALLBACK_TTL_SECONDS = 366 * 24 * 60 * 60;
/** Expired rows and other generations' rows are deleted at most this often, a bounded number at a time. */
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 1_000;
const SWEEP_BATCHES = 10;

/** How an object's id is kept (see CREDENTIAL_KINDS). */
export const hashId = (id: string): string => createHash('sha256').update(id).digest('base64url');

/**
 * oidc-provider's objects in the service's database (oauth_objects): clients, grants, refresh tokens, codes,
 * sessions and interactions, so that every process against the database sees the same ones. Every object
 * belongs to one state-file generation; a new generation finds nothing from before.
 */
export class OAuthStore {
  readonly #db: DatabaseHandle;
  readonly #limits: AuthorizationServerLimits;
  readonly #logger: Logger;
  #lastSweep = 0;

  constructor(db: DatabaseHandle, limits: AuthorizationServerLimits, logger: Logger) {
    this.#db = db;
    this.#limits = limits;
    this.#logger = logger;
  }

  /** oidc-provider's `adapter` configuration for one generation. */
  adapterFactory(generation: string): (kind: string) => Adapter {
    const adapters = new Map<string, Adapter>();
    return (kind) => {
      let adapter = adapters.get(kind);
      if (adapter === undefined) adapters.set(kind, (adapter = new DatabaseAdapter(this, generation, kind)));
      return adapter;
    };
  }

  /** Live interactions started from `address`. */
  liveInteractionsFrom(generation: string, address: string): Promise<number> {
    return this.#run('counting sign-ins in progress', (trx) => countObjects(trx, generation, 'Interaction', { address, live: true }));
  }

  /**
   * Before a registration: when the clients are at their cap, drops the oldest that never obtained a token.
   * False when there is no room (every client at the cap has obtained one).
   */
  makeRoomForClient(generation: string): Promise<boolean> {
    return this.#run('registering a client', async (trx) => {
      const surplus = (await countObjects(trx, generation, 'Client')) - this.#limits.maxClients + 1;
      if (surplus <= 0) return true;
      return (await deleteOldest(trx, generation, 'Client', surplus, { neverUsed: true })) === surplus;
    });
  }

  /**
   * Moves the clients, grants and refresh tokens that versions before 0.2 kept in the state file into the
   * database, once, then rewrites the file without them. A marker row makes it happen once per generation even
   * if rewriting the file fails, so nothing revoked since comes back.
   */
  async importLegacySections(state: AuthorizationServerState, dropFromFile: () => Promise<void>): Promise<number> {
    const kinds: Record<string, string> = { oauth_clients: 'Client', oauth_grants: 'Grant', oauth_refresh_tokens: 'RefreshToken' };
    const entries = Object.entries(state.legacySections).flatMap(([section, values]) =>
      kinds[section] === undefined ? [] : Object.entries(values).map(([key, raw]) => ({ kind: kinds[section]!, key, raw })),
    );
    if (entries.length === 0) return 0;
    const marker: OAuthObjectKey = { generation: state.generation, kind: 'LegacyImport', id: 'state-file-sections' };
    const imported = await this.#run('importing the state file', async (trx) => {
      if ((await findObject(trx, marker)) !== undefined) return 0;
      let count = 0;
      const now = Math.floor(Date.now() / 1000);
      for (const { kind, key, raw } of entries) {
        const entry = decodeLegacy(raw);
        if (entry === undefined || (entry.expiresAt !== null && entry.expiresAt <= now)) continue;
        const ttl = entry.expiresAt === null ? this.#limits.idleClientTtlSeconds : entry.expiresAt - now;
        // The file keyed entries by the same hash as the table; the id itself is in the payload.
        const { jti: _jti, ...payload } = entry.payload;
        await upsertObject(trx, {
          generation: state.generation,
          kind,
          id: key,
          payload: kind === 'RefreshToken' ? payload : entry.payload,
          uid: undefined,
          grantId: typeof entry.payload.grantId === 'string' ? entry.payload.grantId : undefined,
          address: undefined,
          expiresInSeconds: ttl,
        });
        count += 1;
      }
      await upsertObject(trx, { ...marker, payload: {}, uid: undefined, grantId: undefined, address: undefined, expiresInSeconds: FALLBACK_TTL_SECONDS });
      return count;
    });
    await dropFromFile().catch((error: unknown) =>
      this.#logger.warn({ err: { message: (error as Error).message } }, 'could not rewrite the state file without its imported sections'),
    );
    return imported;
  }

  /** Deletes expired rows and other generations' rows, at most once a minute and a bounded number at a time. */
  async sweep(generation: string, force = false): Promise<void> {
    if (!force && Date.now() - this.#lastSweep < SWEEP_INTERVAL_MS) return;
    this.#lastSweep = Date.now();
    try {
      for (let batch = 0; batch < SWEEP_BATCHES; batch++) {
        const deleted = await this.#run('sweeping expired sign-in state', (trx) => sweepObjects(trx, generation, SWEEP_BATCH));
        if (deleted < SWEEP_BATCH) break;
      }
    } catch (error) {
      // The next sweep tries again; what it would have deleted is already invisible (expired or another generation).
      this.#logger.warn({ err: { message: (error as Error).message } }, 'sweeping expired authorization-server rows failed');
    }
  }

  async upsert(generation: string, kind: string, id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const stored = CREDENTIAL_KINDS.has(kind) ? withoutJti(payload) : payload;
    const ttl = kind === 'Client' ? this.#limits.unusedClientTtlSeconds : positiveOr(expiresIn, FALLBACK_TTL_SECONDS);
    const cap = kind === 'Interaction' ? this.#limits.maxInteractions : kind === 'Session' ? this.#limits.maxSessions : undefined;
    await this.#run('saving sign-in state', async (trx) => {
      if (cap !== undefined) await lockKind(trx, generation, kind);
      await upsertObject(trx, {
        generation,
        kind,
        id: hashId(id),
        payload: stored as Record<string, unknown>,
        uid: typeof payload.uid === 'string' ? payload.uid : undefined,
        grantId: typeof payload.grantId === 'string' ? payload.grantId : undefined,
        address: kind === 'Interaction' ? requestAddress.getStore() : undefined,
        expiresInSeconds: ttl,
      });
      if (cap !== undefined) {
        const surplus = (await countObjects(trx, generation, kind)) - cap;
        if (surplus > 0) await deleteOldest(trx, generation, kind, surplus);
      }
    });
    await this.sweep(generation);
  }

  async find(generation: string, kind: string, id: string): Promise<AdapterPayload | undefined> {
    const payload = await this.#run('reading sign-in state', (trx) => findObject(trx, { generation, kind, id: hashId(id) }));
    return payload === undefined ? undefined : restoreJti(kind, id, payload);
  }

  findByUid(generation: string, kind: string, uid: string): Promise<AdapterPayload | undefined> {
    return this.#run('reading sign-in state', (trx) => findObjectByUid(trx, generation, kind, uid));
  }

  async consume(generation: string, kind: string, id: string): Promise<void> {
    await this.#run('saving sign-in state', async (trx) => {
      const payload = await consumeObject(trx, { generation, kind, id: hashId(id) });
      // The client obtained a token: from now on it expires only after a long time unused.
      if (TOKEN_KINDS.has(kind) && typeof payload?.clientId === 'string') {
        await markClientUsed(trx, { generation, kind: 'Client', id: hashId(payload.clientId) }, this.#limits.idleClientTtlSeconds);
      }
    });
  }

  async destroy(generation: string, kind: string, id: string): Promise<void> {
    await this.#run('deleting sign-in state', (trx) => destroyObject(trx, { generation, kind, id: hashId(id) }));
  }

  async revokeByGrantId(generation: string, kind: string, grantId: string): Promise<void> {
    await this.#run('revoking a grant', (trx) => destroyObjectsOfGrant(trx, generation, kind, grantId));
  }

  #run<T>(activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T> {
    return this.#db.withAuthorizationServer(activity, fn);
  }
}

class DatabaseAdapter implements Adapter {
  readonly #store: OAuthStore;
  readonly #generation: string;
  readonly #kind: string;

  constructor(store: OAuthStore, generation: string, kind: string) {
    this.#store = store;
    this.#generation = generation;
    this.#kind = kind;
  }

  upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    return this.#store.upsert(this.#generation, this.#kind, id, payload, expiresIn);
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.#store.find(this.#generation, this.#kind, id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#store.findByUid(this.#generation, this.#kind, uid);
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  consume(id: string): Promise<void> {
    return this.#store.consume(this.#generation, this.#kind, id);
  }

  destroy(id: string): Promise<void> {
    return this.#store.destroy(this.#generation, this.#kind, id);
  }

  revokeByGrantId(grantId: string): Promise<void> {
    return this.#store.revokeByGrantId(this.#generation, this.#kind, grantId);
  }
}

function withoutJti(payload: AdapterPayload): AdapterPayload {
  const { jti: _jti, ...rest } = payload;
  return rest;
}

function restoreJti(kind: string, id: string, payload: Record<string, unknown>): AdapterPayload {
  return (CREDENTIAL_KINDS.has(kind) ? { ...payload, jti: id } : payload) as AdapterPayload;
}

function positiveOr(seconds: number | undefined, fallback: number): number {
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : fallback;
}

/** An entry of a legacy state-file section: base64url JSON of `{ p: payload, e: expiry (epoch s) | null }`. */
function decodeLegacy(raw: string): { payload: Record<string, unknown>; expiresAt: number | null } | undefined {
  try {
    const { p, e } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { p: unknown; e: unknown };
    if (typeof p !== 'object' || p === null) return undefined;
    return { payload: p as Record<string, unknown>, expiresAt: typeof e === 'number' ? e : null };
  } catch {
    return undefined;
  }
}
