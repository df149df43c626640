import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { invalidInput, notFound } from '../../errors.js';
import { writeFileAtomically } from './atomic-file.js';
import { burnPasswordCheck, hashPassword, verifyPassword } from './password-hash.js';

/** A person who can sign in to the built-in authorization server. `id` is the `sub` of their tokens. */
export interface User {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  /** Refresh tokens and sessions from before this instant are refused. */
  readonly passwordChangedAt: string;
  /** Every token and sign-in from before this instant is refused ("delete all my data"); absent: none. */
  readonly tokensRevokedAt?: string | undefined;
}

interface StoredUser extends User {
  readonly passwordHash: string;
}

interface UsersFile {
  readonly version: 1;
  readonly users: readonly StoredUser[];
}

const NAME = /^[a-z0-9][a-z0-9._@+-]{0,63}$/;
export const MIN_PASSWORD_LENGTH = 8;
const MAX_PASSWORD_LENGTH = 1024;

/** Names are case-insensitive: stored and compared lower-cased. */
export function normaliseUserName(name: string): string {
  const normalised = name.normalize('NFKC').trim().toLowerCase();
  if (!NAME.test(normalised)) {
    throw invalidInput(
      `user name must be 1 to 64 letters, digits or . _ @ + -, starting with a letter or digit (got ${JSON.stringify(name)})`,
    );
  }
  return normalised;
}

function checkPassword(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw invalidInput(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw invalidInput(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
}

/**
 * The users file (`<DataDir>/users.json`, mode 0600). A file rather than a table so that the CLI can manage
 * users while the server runs on PGlite (one process per data directory), and separate from the OAuth state
 * file so that resetting that file (new keys, every client logs in again) keeps the accounts and so the
 * `sub` that owns each memory. Re-checked with one stat per use, so CLI changes apply at once.
 */
export class UserStore {
  readonly path: string;
  #users: readonly StoredUser[] = [];
  #identity: string | undefined;

  constructor(path: string) {
    this.path = path;
  }

  list(): readonly User[] {
    return this.#read().map(publicView);
  }

  findById(id: string): User | undefined {
    const user = this.#read().find((candidate) => candidate.id === id);
    return user === undefined ? undefined : publicView(user);
  }

  findByName(name: string): User | undefined {
    let normalised: string;
    try {
      normalised = normaliseUserName(name);
    } catch {
      return undefined;
    }
    const user = this.#read().find((candidate) => candidate.name === normalised);
    return user === undefined ? undefined : publicView(user);
  }

  /** The user when name and password match; spends the same time when the user does not exist. */
  async authenticate(name: string, password: string): Promise<User | undefined> {
    let normalised: string | undefined;
    try {
      normalised = normaliseUserName(name);
    } catch {
      normalised = undefined;
    }
    const user = normalised === undefined ? undefined : this.#read().find((candidate) => candidate.name === normalised);
    if (user === undefined || password.length > MAX_PASSWORD_LENGTH) {
      await burnPasswordCheck(password.slice(0, MAX_PASSWORD_LENGTH));
      return undefined;
    }
    return (await verifyPassword(user.passwordHash, password)) ? publicView(user) : undefined;
  }

  async add(name: string, password: string): Promise<User> {
    const normalised = normaliseUserName(name);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const users = this.#read();
    if (users.some((user) => user.name === normalised)) throw invalidInput(`user "${normalised}" already exists`);
    const now = new Date().toISOString();
    const user: StoredUser = { id: randomUUID(), name: normalised, createdAt: now, passwordChangedAt: now, passwordHash };
    this.#write([...users, user]);
    return publicView(user);
  }

  async setPassword(name: string, password: string): Promise<User> {
    const normalised = normaliseUserName(name);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const users = this.#read();
    const existing = users.find((user) => user.name === normalised);
    if (existing === undefined) throw notFound(`user "${normalised}"`);
    const updated: StoredUser = { ...existing, passwordHash, passwordChangedAt: new Date().toISOString() };
    this.#write(users.map((user) => (user === existing ? updated : user)));
    return publicView(updated);
  }

  /** Refuses every token and sign-in the user holds now (the page's "delete all my data"); undefined if no such user. */
  revokeTokens(id: string): User | undefined {
    const users = this.#read();
    const existing = users.find((user) => user.id === id);
    if (existing === undefined) return undefined;
    const updated: StoredUser = { ...existing, tokensRevokedAt: new Date().toISOString() };
    this.#write(users.map((user) => (user === existing ? updated : user)));
    return publicView(updated);
  }

  remove(name: string): User {
    const normalised = normaliseUserName(name);
    const users = this.#read();
    const existing = users.find((user) => user.name === normalised);
    if (existing === undefined) throw notFound(`user "${normalised}"`);
    this.#write(users.filter((user) => user !== existing));
    return publicView(existing);
  }

  #read(): readonly StoredUser[] {
    const identity = this.#stat();
    if (identity === this.#identity) return this.#users;
    if (identity === undefined) {
      this.#users = [];
    } else {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<UsersFile>;
      if (parsed.version !== 1 || !Array.isArray(parsed.users)) throw new Error(`${this.path} is not a memory-service users file`);
      this.#users = parsed.users;
    }
    this.#identity = identity;
    return this.#users;
  }

  #write(users: readonly StoredUser[]): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const file: UsersFile = { version: 1, users };
    // A full disk fails here, before anything in memory changes: the file and this store keep the old users.
    writeFileAtomically(this.path, `${JSON.stringify(file, null, 2)}\n`);
    this.#users = users;
    this.#identity = this.#stat();
  }

  #stat(): string | undefined {
    try {
      const { ino, mtimeMs, size } = statSync(this.path);
      return `${ino}:${mtimeMs}:${size}`;
    } catch {
      return undefined;
    }
  }
}

function publicView({ id, name, createdAt, passwordChangedAt, tokensRevokedAt }: StoredUser): User {
  return { id, name, createdAt, passwordChangedAt, ...(tokensRevokedAt === undefined ? {} : { tokensRevokedAt }) };
}

/** The instant (ms) before which the user's sign-ins and tokens are refused: a password change or a revocation. */
export function signInsValidFrom(user: User): number {
  return Math.max(Date.parse(user.passwordChangedAt), user.tokensRevokedAt === undefined ? 0 : Date.parse(user.tokensRevokedAt));
}

export function usersFilePath(dataDir: string): string {
  return join(dataDir, 'users.json');
}
