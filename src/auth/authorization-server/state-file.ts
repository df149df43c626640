import { hkdfSync, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parse as parseIni, stringify as stringifyIni } from 'ini';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import { createFileExclusively, writeFileAtomically } from './atomic-file.js';

export const SIGNING_ALG = 'ES256';

/** The built-in authorization server's persisted state: whatever must die with the signing key. */
export interface AuthorizationServerState {
  /** Changes whenever the file is created anew; everything issued under an older one is void. */
  readonly generation: string;
  readonly createdAt: string;
  readonly signingKey: {
    readonly kid: string;
    readonly privateKey: CryptoKey;
    readonly publicKey: CryptoKey;
    readonly privateJwk: JWK;
    readonly publicJwk: JWK;
  };
  /**
   * Registered clients, grants and refresh tokens as versions before 0.2 kept them in the file (sections named
   * after them), read once to move them into the database; empty in files written since.
   */
  readonly legacySections: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * A key for one purpose (cookie signing, the sign-in forms' CSRF tokens), derived from the signing key's private
 * part with HKDF: every process sharing the file derives the same keys, and a new generation brings new ones.
 */
export function derivedKey(state: AuthorizationServerState, purpose: string): Buffer {
  const secret = Buffer.from(String(state.signingKey.privateJwk.d), 'base64url');
  return Buffer.from(hkdfSync('sha256', secret, state.generation, `memory-service ${purpose}`, 32));
}

interface FileIdentity {
  readonly ino: number;
  readonly mtimeMs: number;
  readonly size: number;
}

/** How long an unusable `OAuthAsIniFile` is left alone before the next attempt to read or create it. */
const UNUSABLE_RETRY_MS = 5_000;

/** The watched path's safety net: the file is checked again at least this often while it is used. */
const WATCH_RECHECK_MS = 1_000;

/**
 * Owns the `OAuthAsIniFile`. `current()` re-checks the file (one stat) on every call, so deleting or overwriting
 * it takes effect at once: new keys are made and every earlier token is refused. `currentWatched()`, for token
 * verification on every request, checks it only when a watch on its folder has seen a change (delivered before
 * any request that arrives afterwards), and at least once a second in case the watch misses one (a network file
 * system changed from another machine, a replaced folder); without a watch it checks on every call.
 *
 * A file that is not our state (unparseable, missing fields, an invalid key) counts as replaced: a new generation.
 * A path that cannot be used at all (a directory, no permission, a full disk) refuses the start; found later, the
 * process carries on with a new generation held in memory (everything issued before is void, as if the file had
 * been replaced), reports it through `onUnusable`, and tries the path again every few seconds.
 */
export class StateFile {
  readonly path: string;
  readonly #onUnusable: ((reason: string) => void) | undefined;
  readonly #unusableRetryMs: number;
  #state: AuthorizationServerState | undefined;
  #identity: FileIdentity | undefined;
  #loading: Promise<AuthorizationServerState> | undefined;
  #unusableUntil = 0;
  /** Watch state for `currentWatched()`: undefined until first used. */
  #watch: { watcher: FSWatcher | undefined; recheck: NodeJS.Timeout } | undefined;
  /** Set by the watch (or its safety net); cleared just before each stat, so a change during a check is not lost. */
  #mayHaveChanged = true;

  constructor(path: string, options: { onUnusable?: (reason: string) => void; unusableRetryMs?: number } = {}) {
    this.path = path;
    this.#onUnusable = options.onUnusable;
    this.#unusableRetryMs = options.unusableRetryMs ?? UNUSABLE_RETRY_MS;
  }

  /** Reads or creates the file at start-up; a path that cannot be used is an error naming the path and why. */
  async open(): Promise<AuthorizationServerState> {
    try {
      return await this.#loadFromPath();
    } catch (error) {
      throw new Error(`OAuthAsIniFile ${this.path} cannot be used: ${unusableReason(error)}`, { cause: error });
    }
  }

  /** The current state, created on first use and recreated when the file was deleted or replaced. */
  async current(): Promise<AuthorizationServerState> {
    if (this.#state !== undefined && Date.now() < this.#unusableUntil) return this.#state;
    if (this.#watch?.watcher !== undefined) this.#mayHaveChanged = false;
    const identity = this.#stat();
    if (this.#state !== undefined && identity !== undefined && sameIdentity(identity, this.#identity)) return this.#state;
    // Until a check finds the file as it was loaded.
    this.#mayHaveChanged = true;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /**
   * As `current()`, without touching the file unless it may have changed (see the class comment). The state itself,
   * not a promise, when nothing needs checking: token verification asks on every request.
   */
  currentWatched(): AuthorizationServerState | Promise<AuthorizationServerState> {
    this.#watch ??= this.#startWatching();
    if (this.#state !== undefined && !this.#mayHaveChanged) return this.#state;
    return this.current();
  }

  /** The signing key's id as `currentWatched()` finds it (what a cached token verdict was reached under). */
  currentKeyId(): string | Promise<string> {
    const state = this.currentWatched();
    return state instanceof Promise ? state.then((known) => known.signingKey.kid) : state.signingKey.kid;
  }

  /** Stops the watch (a process closing its service). */
  close(): void {
    this.#watch?.watcher?.close();
    if (this.#watch !== undefined) clearInterval(this.#watch.recheck);
    this.#watch = undefined;
    this.#mayHaveChanged = true;
  }

  #startWatching(): { watcher: FSWatcher | undefined; recheck: NodeJS.Timeout } {
    const name = basename(this.path);
    const changed = () => {
      this.#mayHaveChanged = true;
    };
    const recheck = setInterval(changed, WATCH_RECHECK_MS).unref();
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(dirname(this.path), { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name) changed();
      });
      // The folder removed, or the watch lost: back to a check on every call.
      watcher.on('error', () => {
        watcher?.close();
        if (this.#watch !== undefined) this.#watch = { ...this.#watch, watcher: undefined };
        changed();
      });
    } catch {
      // No watch (no folder yet, or the system's limit on watches reached): a check on every call.
      watcher = undefined;
    }
    return { watcher, recheck };
  }

  /** Rewrites the file without its legacy sections (once they are in the database); same generation and key. */
  async dropLegacySections(): Promise<void> {
    const state = await this.current();
    if (Object.keys(state.legacySections).length === 0) return;
    const next = { ...state, legacySections: {} };
    this.#replace(next);
    this.#state = next;
  }

  async #load(): Promise<AuthorizationServerState> {
    try {
      const state = await this.#loadFromPath();
      this.#unusableUntil = 0;
      return state;
    } catch (error) {
      const state = await newState();
      this.#state = state;
      this.#identity = undefined;
      this.#unusableUntil = Date.now() + this.#unusableRetryMs;
      this.#onUnusable?.(`OAuthAsIniFile ${this.path} cannot be used (${unusableReason(error)}); a new signing key is held in memory until it can`);
      return state;
    }
  }

  async #loadFromPath(): Promise<AuthorizationServerState> {
    // Identified before it is read: if it changes in between, the next use reads it again.
    let identity = this.#stat();
    let state: AuthorizationServerState;
    try {
      state = await parseState(readFileSync(this.path, 'utf8'));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        state = await this.#createIfAbsent();
      } else if (error instanceof StateFileFormatError) {
        // Overwritten with something that is not our state: start a new generation.
        state = await newState();
        this.#replace(state);
      } else {
        throw error;
      }
      identity = this.#stat();
    }
    this.#state = state;
    this.#identity = identity;
    return state;
  }

  /**
   * Creates the file unless another process got there first (several replicas starting together, or all of them
   * noticing that it was deleted): whatever is in place afterwards is what every process uses.
   */
  async #createIfAbsent(): Promise<AuthorizationServerState> {
    const state = await newState();
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    if (createFileExclusively(this.path, serialiseState(state))) return state;
    return parseState(readFileSync(this.path, 'utf8'));
  }

  #replace(state: AuthorizationServerState): void {
    writeFileAtomically(this.path, serialiseState(state));
    this.#identity = this.#stat();
  }

  #stat(): FileIdentity | undefined {
    try {
      const { ino, mtimeMs, size } = statSync(this.path);
      return { ino, mtimeMs, size };
    } catch {
      return undefined;
    }
  }
}

class StateFileFormatError extends Error {}

function unusableReason(error: unknown): string {
  // writeFileAtomically names the file in its own error; the system's reason is its cause.
  const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EROFS':
      return 'the file system is read-only';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}

function sameIdentity(a: FileIdentity, b: FileIdentity | undefined): boolean {
  return b !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size;
}

async function newState(): Promise<AuthorizationServerState> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const privateJwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    generation: randomUUID(),
    createdAt: new Date().toISOString(),
    signingKey: { kid, privateKey, publicKey, privateJwk, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' } },
    legacySections: {},
  };
}

const HEADER = [
  '; memory-service built-in OAuth authorization server state.',
  '; Keep it private (mode 0600) and outside the application tree. Deleting or replacing it',
  '; invalidates every issued token and client registration: clients must log in again.',
  '',
].join('\n');

function serialiseState(state: AuthorizationServerState): string {
  return (
    HEADER +
    stringifyIni({
      generation: state.generation,
      created_at: state.createdAt,
      signing_kid: state.signingKey.kid,
      signing_alg: SIGNING_ALG,
      // Private JWK kept as base64url JSON so INI quoting never mangles it.
      signing_private_jwk: Buffer.from(JSON.stringify(state.signingKey.privateJwk)).toString('base64url'),
      ...state.legacySections,
    })
  );
}

async function parseState(text: string): Promise<AuthorizationServerState> {
  const raw = parseIni(text) as Record<string, unknown>;
  const { generation, created_at: createdAt, signing_kid: kid, signing_private_jwk: encoded } = raw;
  if (typeof generation !== 'string' || typeof kid !== 'string' || typeof encoded !== 'string' || typeof createdAt !== 'string') {
    throw new StateFileFormatError('not a memory-service state file');
  }
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as JWK;
  } catch {
    throw new StateFileFormatError('unreadable signing key');
  }
  if (typeof privateJwk !== 'object' || privateJwk === null || typeof privateJwk.d !== 'string') {
    throw new StateFileFormatError('no private signing key');
  }
  const { d: _d, ...publicJwk } = privateJwk;
  let privateKey: CryptoKey;
  let publicKey: CryptoKey;
  try {
    privateKey = (await importJWK(privateJwk, SIGNING_ALG, { extractable: true })) as CryptoKey;
    publicKey = (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey;
  } catch {
    throw new StateFileFormatError('invalid signing key');
  }
  const legacySections: Record<string, Record<string, string>> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'object' && value !== null) legacySections[key] = value as Record<string, string>;
  }
  return {
    generation,
    createdAt,
    signingKey: { kid, privateKey, publicKey, privateJwk, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' } },
    legacySections,
  };
}
