import type { Principal } from '../db/open-database.js';
import { lockSubjectForWrite } from '../db/memories/write-lock.js';
import { principalSpaces, type SpaceRole, type SpaceRow } from '../db/spaces.js';
import type { DbTransaction } from '../db/schema.js';
import { forbidden, invalidInput, notFound } from '../errors.js';

/**
 * Who is asking: the subject, and what their token allows (see Principal). A plain string is a subject with an
 * unlimited token (the page, the CLI, tests).
 */
export type Caller = Principal | string;

export const toPrincipal = (caller: Caller): Principal => (typeof caller === 'string' ? { subject: caller } : caller);

/** Who wrote a row of the space keyed `key`, as `memories.author` keeps it: nobody in one's own personal space. */
export function authorIn(key: string, caller: Caller): string | undefined {
  const { subject } = toPrincipal(caller);
  return key === subject ? undefined : subject;
}

/** The id every subject's personal space answers to: its key is the subject itself, never shown. */
export const PERSONAL_SPACE_ID = 'personal';
export const PERSONAL_SPACE_NAME = 'Personal';
/** The prefix of a shared space's key and id; no subject may begin with it (auth/subject.ts). */
export const SPACE_KEY_PREFIX = 'space:';

export type { Principal, SpaceRole };

/** A space as a client names it. */
export interface SpaceRef {
  /** `personal`, or `space:<id>`. */
  readonly id: string;
  readonly name: string;
}

/** A space the caller may use: how to name it, its storage key and the caller's role in it. */
export interface AccessibleSpace extends SpaceRef {
  readonly key: string;
  readonly role: SpaceRole;
  readonly personal: boolean;
}

export type Need = 'read' | 'write';

export function personalSpace(subject: string): AccessibleSpace {
  return { id: PERSONAL_SPACE_ID, name: PERSONAL_SPACE_NAME, key: subject, role: 'owner', personal: true };
}

export function toAccessible(row: SpaceRow, subject: string): AccessibleSpace {
  if (row.key === subject) return personalSpace(subject);
  return { id: row.key, name: row.name ?? row.key, key: row.key, role: row.role, personal: false };
}

/** Every space the caller may use, personal first (the token's limit applied by the database). */
export async function accessibleSpaces(trx: DbTransaction, caller: Caller): Promise<AccessibleSpace[]> {
  const { subject } = toPrincipal(caller);
  return (await principalSpaces(trx)).map((row) => toAccessible(row, subject));
}

const isPersonal = (selector: string) => selector.trim().toLowerCase() === PERSONAL_SPACE_ID;

/** Whether the caller's token reaches their personal space. */
function personalAllowed(principal: Principal): boolean {
  return principal.spaceLimit === undefined || principal.spaceLimit.includes(principal.subject);
}

/**
 * The spaces `selectors` name (an id, `personal`, or a name, case-insensitive), or the personal space when none
 * is given, each once, in the order given. A space the caller is not a member of is NOT_FOUND, exactly as one
 * that does not exist; one the caller may only read is FORBIDDEN when `need` is write.
 */
export async function resolveSpaces(trx: DbTransaction, caller: Caller, selectors: readonly string[] | undefined, need: Need): Promise<AccessibleSpace[]> {
  const principal = toPrincipal(caller);
  const wanted = selectors === undefined || selectors.length === 0 ? [PERSONAL_SPACE_ID] : selectors;
  // The personal space alone needs no lookup: its key is the subject, and it is always the subject's to write.
  if (wanted.every(isPersonal)) {
    if (!personalAllowed(principal)) throw forbidden('this token is limited to other spaces than your personal one; name a space it may use');
    return [personalSpace(principal.subject)];
  }
  const spaces = await accessibleSpaces(trx, principal);
  const found = new Map<string, AccessibleSpace>();
  for (const selector of wanted) {
    const space = pick(spaces, selector, principal);
    found.set(space.key, need === 'write' ? writable(space) : space);
  }
  if (need === 'read') return [...found.values()];
  // The personal space's membership never changes: its writers take its lock themselves, in their first statement.
  return Promise.all([...found.values()].map((space) => (space.personal ? space : holdForWrite(trx, principal, space.key))));
}

const readerRefused = (space: SpaceRef) => forbidden(`you may read space "${space.name}" but not write to it (your role there is reader)`);

/** `space`, when the caller may write to it (a check, not a hold: holdForWrite asks again under the lock); FORBIDDEN for a reader. */
export function writable(space: AccessibleSpace): AccessibleSpace {
  if (space.role === 'reader') throw readerRefused(space);
  return space;
}

/**
 * Takes the write lock of the space keyed `key` and reads the caller's role there again under it. Every change of
 * a shared space's members takes the same lock (SpaceService), so a write either ends before a removal commits
 * (and was acknowledged) or reads the removal here and is refused, NOT_FOUND (FORBIDDEN when made a reader), with
 * nothing stored; without the lock, a removal committed between the check and the insert would meet the write in
 * row-level security's refusal halfway through, a database error.
 */
export async function holdForWrite(trx: DbTransaction, caller: Caller, key: string): Promise<AccessibleSpace> {
  const principal = toPrincipal(caller);
  await lockSubjectForWrite(trx, key);
  if (key === principal.subject && personalAllowed(principal)) return personalSpace(principal.subject);
  const space = (await accessibleSpaces(trx, principal)).find((candidate) => candidate.key === key);
  if (space === undefined) throw notFound(`space ${JSON.stringify(key)}`);
  if (space.role === 'reader') throw readerRefused(space);
  return space;
}

/** The one space `selector` names (resolveSpaces), or the personal space when it is undefined. */
export async function resolveSpace(trx: DbTransaction, caller: Caller, selector: string | undefined, need: Need): Promise<AccessibleSpace> {
  const [space] = await resolveSpaces(trx, caller, selector === undefined ? undefined : [selector], need);
  return space!;
}

function pick(spaces: readonly AccessibleSpace[], selector: string, principal: Principal): AccessibleSpace {
  const wanted = selector.trim();
  if (isPersonal(wanted)) {
    if (!personalAllowed(principal)) throw forbidden('this token is limited to other spaces than your personal one');
    return personalSpace(principal.subject);
  }
  if (wanted.startsWith(SPACE_KEY_PREFIX)) {
    const byId = spaces.find((space) => space.key === wanted);
    if (byId === undefined) throw notFound(`space ${JSON.stringify(wanted)}`);
    return byId;
  }
  const name = normaliseSpaceName(wanted).toLowerCase();
  const byName = spaces.filter((space) => space.name.toLowerCase() === name);
  if (byName.length > 1) throw invalidInput(`${byName.length} of your spaces are named ${JSON.stringify(wanted)}; give its id instead (${byName.map((space) => space.id).join(', ')})`);
  const [only] = byName;
  if (only === undefined) throw notFound(`space ${JSON.stringify(wanted)}`);
  return only;
}

export const SPACE_NAME_LIMITS = { maxChars: 80 } as const;

/** A space's name as stored: NFC, trimmed, inner whitespace collapsed. */
export function normaliseSpaceName(name: string): string {
  return name.normalize('NFC').trim().replace(/\s+/gu, ' ');
}

/** Why `name` cannot name a new or renamed space; undefined when it can. */
export function spaceNameProblem(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if ([...name].length > SPACE_NAME_LIMITS.maxChars) return `must be at most ${SPACE_NAME_LIMITS.maxChars} characters`;
  if (/\p{Cc}/u.test(name)) return 'must not contain control characters';
  if (isPersonal(name)) return `"${PERSONAL_SPACE_ID}" names everyone's personal space`;
  if (name.toLowerCase().startsWith(SPACE_KEY_PREFIX)) return `must not begin with "${SPACE_KEY_PREFIX}" (space ids do)`;
  return undefined;
}
