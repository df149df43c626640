import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parse as parseIni, stringify as stringifyIni } from 'ini';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';

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
  /** Sections owned by other modules (registered clients, refresh-token families), kept verbatim. */
  readonly sections: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

interface FileIdentity {
  readonly ino: number;
  readonly mtimeMs: number;
  readonly size: number;
}

/**
 * Owns the `OAuthAsIniFile`. The file is re-checked (one stat) on every use, so deleting or overwriting
 * it takes effect at once: new keys are made and every earlier token is refused.
 */
export class StateFile {
  readonly path: string;
  #state: AuthorizationServerState | undefined;
  #identity: FileIdentity | undefined;
  #loading: Promise<AuthorizationServerState> | undefined;

  constructor(path: string) {
    this.path = path;
  }

  /** The current state, created on first use and recreated when the file was deleted or replaced. */
  async current(): Promise<AuthorizationServerState> {
    const identity = this.#stat();
    if (this.#state !== undefined && identity !== undefined && sameIdentity(identity, this.#identity)) return this.#state;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /** Replaces one named section (e.g. registered clients) and writes the file atomically. */
  async writeSection(name: string, entries: Record<string, string>): Promise<void> {
    const state = await this.current();
    const next = { ...state, sections: { ...state.sections, [name]: { ...entries } } };
    this.#write(next);
    this.#state = next;
  }

  async #load(): Promise<AuthorizationServerState> {
    let state: AuthorizationServerState;
    try {
      state = await parseState(readFileSync(this.path, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof StateFileFormatError)) throw error;
      // Missing, or overwritten with something that is not our state: start a new generation.
      state = await newState();
      this.#write(state);
    }
    this.#state = state;
    this.#identity = this.#stat();
    return state;
  }

  #write(state: AuthorizationServerState): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temporary, serialiseState(state), { mode: 0o600 });
    renameSync(temporary, this.path);
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
    sections: {},
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
      ...state.sections,
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
  const privateKey = (await importJWK(privateJwk, SIGNING_ALG, { extractable: true })) as CryptoKey;
  const { d: _d, ...publicJwk } = privateJwk;
  const publicKey = (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey;
  const sections: Record<string, Record<string, string>> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'object' && value !== null) sections[key] = value as Record<string, string>;
  }
  return {
    generation,
    createdAt,
    signingKey: { kid, privateKey, publicKey, privateJwk, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' } },
    sections,
  };
}
