import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { StateFile } from './state-file.js';

/**
 * Where oidc-provider keeps its objects. Those that must die with the signing key and survive a restart
 * (registered clients, grants, refresh tokens) live in sections of the state file; short-lived ones
 * (authorization codes, interactions, sessions) live in memory. Every object belongs to one state-file
 * generation: after the file is deleted or replaced, nothing from before is found.
 */
const PERSISTED_SECTIONS: Readonly<Record<string, string>> = {
  Client: 'oauth_clients',
  Grant: 'oauth_grants',
  RefreshToken: 'oauth_refresh_tokens',
};

interface Entry {
  readonly payload: AdapterPayload;
  /** Epoch seconds; undefined never expires (clients). */
  readonly expiresAt: number | undefined;
}

const now = (): number => Math.floor(Date.now() / 1000);
const expired = (entry: Entry): boolean => entry.expiresAt !== undefined && entry.expiresAt <= now();
const expiry = (expiresIn: number | undefined): number | undefined =>
  expiresIn === undefined || !Number.isFinite(expiresIn) || expiresIn <= 0 ? undefined : now() + Math.ceil(expiresIn);

/** State-file writes replace whole sections, so every read-modify-write goes through one queue per file. */
const writeQueues = new WeakMap<StateFile, Promise<unknown>>();
function serialised<T>(stateFile: StateFile, task: () => Promise<T>): Promise<T> {
  const previous = writeQueues.get(stateFile) ?? Promise.resolve();
  const next = previous.then(task, task);
  writeQueues.set(stateFile, next.catch(() => undefined));
  return next;
}

/** One factory per provider instance, i.e. per state-file generation. */
export function adapterFactory(stateFile: StateFile, generation: string): (name: string) => Adapter {
  const memory = new Map<string, MemoryAdapter>();
  return (name) => {
    const section = PERSISTED_SECTIONS[name];
    if (section !== undefined) return new StateFileAdapter(stateFile, generation, section);
    let adapter = memory.get(name);
    if (adapter === undefined) memory.set(name, (adapter = new MemoryAdapter()));
    return adapter;
  };
}

class StateFileAdapter implements Adapter {
  readonly #stateFile: StateFile;
  readonly #generation: string;
  readonly #section: string;

  constructor(stateFile: StateFile, generation: string, section: string) {
    this.#stateFile = stateFile;
    this.#generation = generation;
    this.#section = section;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const entry: Entry = { payload, expiresAt: expiry(expiresIn) };
    await this.#mutate((entries) => {
      entries[key(id)] = encode(entry);
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const state = await this.#stateFile.current();
    if (state.generation !== this.#generation) return undefined;
    const raw = state.sections[this.#section]?.[key(id)];
    const entry = raw === undefined ? undefined : decode(raw);
    return entry === undefined || expired(entry) ? undefined : entry.payload;
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await this.#mutate((entries) => {
      const entry = entries[key(id)] === undefined ? undefined : decode(entries[key(id)]!);
      if (entry !== undefined) entries[key(id)] = encode({ ...entry, payload: { ...entry.payload, consumed: now() } });
    });
  }

  async destroy(id: string): Promise<void> {
    await this.#mutate((entries) => {
      delete entries[key(id)];
    });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.#mutate((entries) => {
      for (const [name, raw] of Object.entries(entries)) {
        if (decode(raw)?.payload.grantId === grantId) delete entries[name];
      }
    });
  }

  /** Applies `change` to this section, dropping expired entries, unless the file has moved to a new generation. */
  #mutate(change: (entries: Record<string, string>) => void): Promise<void> {
    return serialised(this.#stateFile, async () => {
      const state = await this.#stateFile.current();
      if (state.generation !== this.#generation) return;
      const entries: Record<string, string> = {};
      for (const [name, raw] of Object.entries(state.sections[this.#section] ?? {})) {
        const entry = decode(raw);
        if (entry !== undefined && !expired(entry)) entries[name] = raw;
      }
      change(entries);
      await this.#stateFile.writeSection(this.#section, entries);
    });
  }
}

/** Keys are hashed: the file never holds a usable refresh-token value, and INI never sees odd characters. */
function key(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

function encode(entry: Entry): string {
  return Buffer.from(JSON.stringify({ p: entry.payload, e: entry.expiresAt ?? null })).toString('base64url');
}

function decode(raw: string): Entry | undefined {
  try {
    const { p, e } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { p: AdapterPayload; e: number | null };
    return { payload: p, expiresAt: e ?? undefined };
  } catch {
    return undefined;
  }
}

class MemoryAdapter implements Adapter {
  readonly #entries = new Map<string, Entry>();
  readonly #uids = new Map<string, string>();
  #writes = 0;

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    this.#entries.set(id, { payload, expiresAt: expiry(expiresIn) });
    if (typeof payload.uid === 'string') this.#uids.set(payload.uid, id);
    // Expired objects are dropped now and then, so abandoned logins do not accumulate.
    if (++this.#writes % 256 === 0) this.#sweep();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    if (expired(entry)) {
      this.#entries.delete(id);
      return undefined;
    }
    return entry.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = this.#uids.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (entry !== undefined) this.#entries.set(id, { ...entry, payload: { ...entry.payload, consumed: now() } });
  }

  async destroy(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (typeof entry?.payload.uid === 'string') this.#uids.delete(entry.payload.uid);
    this.#entries.delete(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [id, entry] of this.#entries) if (entry.payload.grantId === grantId) await this.destroy(id);
  }

  #sweep(): void {
    for (const [id, entry] of this.#entries) if (expired(entry)) void this.destroy(id);
  }
}
