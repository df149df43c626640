import { randomBytes } from 'node:crypto';
import { eraseSharedSpace, type ErasedRows } from '../db/erase-subject.js';
import { lockSubjectForWrite } from '../db/memories/write-lock.js';
import type { DatabaseHandle } from '../db/open-database.js';
import type { DbTransaction } from '../db/schema.js';
import {
  insertSpace,
  putMember,
  removeMember,
  renameSpace,
  setExternalGroup,
  setSpaceOwner,
  sharedSpace,
  spaceMembers,
  type MemberRole,
} from '../db/spaces.js';
import { forbidden, invalidInput, notFound } from '../errors.js';
import {
  accessibleSpaces,
  normaliseSpaceName,
  resolveSpace,
  SPACE_KEY_PREFIX,
  spaceNameProblem,
  toPrincipal,
  type AccessibleSpace,
  type Caller,
} from './spaces.js';

/** How the people a space is shared with are named: user names with the built-in server, subjects otherwise. */
export interface PeopleDirectory {
  /** The subject of the person `name` names; undefined when there is none. */
  subjectOf(name: string): string | undefined;
  /** How to show `subject` to others: their user name when known. */
  nameOf(subject: string): string | undefined;
}

/** Anyone is named by their subject (an external authorization server: the `sub` its tokens carry). */
export const SUBJECTS_AS_NAMES: PeopleDirectory = { subjectOf: (name) => (name.trim() === '' ? undefined : name.trim()), nameOf: () => undefined };

export interface SpaceMember {
  readonly subject: string;
  /** Their user name, when the directory knows it. */
  readonly name: string | undefined;
  readonly role: 'owner' | MemberRole;
}

export interface SpaceDetails extends AccessibleSpace {
  /** The owner first, then the members as they were added; every member sees them. */
  readonly members: readonly SpaceMember[];
  readonly externalGroup: { readonly name: string; readonly role: MemberRole } | undefined;
}

/** Random part of a shared space's key: 24 characters of [a-z0-9] (~124 bits). */
const ID_CHARS = 24;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Most spaces one subject may own: each costs a row per statement of row-level security's membership lookup. */
export const MAX_OWNED_SPACES = 100;
/** Most members of one space. */
export const MAX_SPACE_MEMBERS = 200;

function newSpaceKey(): string {
  const bytes = randomBytes(ID_CHARS);
  return SPACE_KEY_PREFIX + [...bytes].map((byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
}

/**
 * Spaces made to be shared: make, rename, share with people as reader or writer, hand on, leave and delete.
 * Each change runs in one transaction acting for the caller, so row-level security checks it too: only an
 * owner may change a space or its members (migration 0020), whatever this code does.
 */
export class SpaceService {
  readonly #db: DatabaseHandle;
  readonly #people: PeopleDirectory;

  constructor(db: DatabaseHandle, people: PeopleDirectory) {
    this.#db = db;
    this.#people = people;
  }

  /** Every space the caller may use, personal first, with their role. */
  async list(caller: Caller): Promise<AccessibleSpace[]> {
    return this.#db.withSubject(caller, 'listing spaces', (trx) => accessibleSpaces(trx, caller), { readOnly: true });
  }

  /** One space with its members (any member may see who else is in it). */
  async details(caller: Caller, selector: string): Promise<SpaceDetails> {
    return this.#db.withSubject(caller, 'reading the space', async (trx) => {
      const space = await resolveSpace(trx, caller, selector, 'read');
      return this.#details(trx, space);
    }, { readOnly: true });
  }

  async create(caller: Caller, name: string): Promise<AccessibleSpace> {
    const { subject } = toPrincipal(caller);
    const wanted = checkedName(name);
    return this.#db.withSubject(caller, 'making the space', async (trx) => {
      const owned = await this.#ownedNamedApart(trx, caller, wanted, undefined);
      if (owned.length >= MAX_OWNED_SPACES) throw invalidInput(`you may own at most ${MAX_OWNED_SPACES} spaces; delete one first`);
      const key = newSpaceKey();
      await insertSpace(trx, { key, name: wanted, owner: subject });
      return { id: key, key, name: wanted, role: 'owner', personal: false };
    });
  }

  async rename(caller: Caller, selector: string, name: string): Promise<void> {
    const wanted = checkedName(name);
    await this.#asOwner(caller, selector, 'renaming the space', async (trx, space) => {
      await this.#ownedNamedApart(trx, caller, wanted, space.key);
      if (!(await renameSpace(trx, space.key, wanted))) throw notFound(`space ${JSON.stringify(selector)}`);
    });
  }

  /** Adds `person` (a user name, or a subject without the built-in server) as reader or writer, or changes their role. */
  async share(caller: Caller, selector: string, person: string, role: MemberRole): Promise<SpaceMember> {
    const member = this.#people.subjectOf(person);
    if (member === undefined) throw notFound(`user ${JSON.stringify(person)}`);
    if (member.startsWith(SPACE_KEY_PREFIX)) throw invalidInput('a space cannot be a member of a space');
    return this.#changeMembers(caller, selector, 'sharing the space', async (trx, space) => {
      if (member === toPrincipal(caller).subject) throw invalidInput('you own this space already');
      const members = await spaceMembers(trx, space.key);
      if (!members.some((row) => row.member === member) && members.length >= MAX_SPACE_MEMBERS) {
        throw invalidInput(`a space may have at most ${MAX_SPACE_MEMBERS} members`);
      }
      await putMember(trx, space.key, member, role);
      return { subject: member, name: this.#people.nameOf(member), role };
    });
  }

  /** Changes the role of one of the space's members, named by subject (the page's member list carries it). */
  async setRole(caller: Caller, selector: string, member: string, role: MemberRole): Promise<void> {
    await this.#changeMembers(caller, selector, 'changing the member\'s role', async (trx, space) => {
      if (!(await spaceMembers(trx, space.key)).some((row) => row.member === member)) throw notFound('member');
      await putMember(trx, space.key, member, role);
    });
  }

  /** Ends `member`'s access at once (the next statement of any of their requests no longer sees the space). */
  async removeMember(caller: Caller, selector: string, member: string): Promise<void> {
    await this.#changeMembers(caller, selector, 'removing the member', async (trx, space) => {
      if (!(await removeMember(trx, space.key, member))) throw notFound('member');
    });
  }

  /** The caller stops being a member. An owner cannot leave: they hand the space on, or delete it. */
  async leave(caller: Caller, selector: string): Promise<void> {
    const { subject } = toPrincipal(caller);
    await this.#db.withSubject(caller, 'leaving the space', async (trx) => {
      const space = await resolveSpace(trx, caller, selector, 'read');
      if (space.personal) throw invalidInput('you cannot leave your personal space');
      if (space.role === 'owner') throw forbidden('the owner cannot leave a space; hand it on to a member first, or delete it');
      await lockSubjectForWrite(trx, space.key);
      if (!(await removeMember(trx, space.key, subject))) {
        throw forbidden('you are in this space through your organisation\'s group, which only the space\'s owner can change');
      }
    });
  }

  /** Hands the space on to one of its members; the former owner stays as a writer. */
  async transfer(caller: Caller, selector: string, member: string): Promise<void> {
    const { subject } = toPrincipal(caller);
    await this.#changeMembers(caller, selector, 'handing the space on', async (trx, space) => {
      const members = await spaceMembers(trx, space.key);
      if (!members.some((row) => row.member === member)) throw invalidInput('a space can be handed on only to one of its members');
      // While still the owner (row-level security checks each statement): the former owner becomes a writer,
      // the new owner's membership row goes (the owner has none), and the space changes hands last.
      await putMember(trx, space.key, subject, 'writer');
      await removeMember(trx, space.key, member);
      if (!(await setSpaceOwner(trx, space.key, member))) throw notFound(`space ${JSON.stringify(selector)}`);
    });
  }

  /**
   * Grants everyone whose token carries `group` in the configured membership claim the role `role` (undefined
   * removes the grant). Only meaningful with an external authorization server.
   */
  async setGroup(caller: Caller, selector: string, group: { name: string; role: MemberRole } | undefined): Promise<void> {
    if (group !== undefined && (group.name.trim() === '' || group.name.length > 200)) throw invalidInput('group must be 1 to 200 characters');
    await this.#changeMembers(caller, selector, 'changing the space\'s group', async (trx, space) => {
      if (!(await setExternalGroup(trx, space.key, group === undefined ? undefined : { name: group.name.trim(), role: group.role }))) {
        throw notFound(`space ${JSON.stringify(selector)}`);
      }
    });
  }

  /**
   * Deletes a space with everything it holds (memories, restatements, tombstones), at once. `confirmName` must be
   * the space's name: a deletion cannot be undone.
   */
  async delete(caller: Caller, selector: string, confirmName: string): Promise<ErasedRows> {
    return this.#asOwner(caller, selector, 'deleting the space', async (trx, space) => {
      if (normaliseSpaceName(confirmName).toLowerCase() !== space.name.toLowerCase()) {
        throw invalidInput(`type the space's name, ${JSON.stringify(space.name)}, to delete it`);
      }
      const erased = await eraseSharedSpace(trx, space.key);
      if (erased === undefined) throw notFound(`space ${JSON.stringify(selector)}`);
      return erased;
    });
  }

  /**
   * The spaces the caller owns but `except`, under the caller's write lock (one owner's spaces are made and
   * renamed one at a time, so the check holds until the change commits); INVALID_INPUT when one is named `name`.
   */
  async #ownedNamedApart(trx: DbTransaction, caller: Caller, name: string, except: string | undefined): Promise<AccessibleSpace[]> {
    await lockSubjectForWrite(trx, toPrincipal(caller).subject);
    const owned = (await accessibleSpaces(trx, caller)).filter((space) => !space.personal && space.role === 'owner' && space.key !== except);
    if (owned.some((space) => space.name.toLowerCase() === name.toLowerCase())) throw invalidInput(`you already have a space named ${JSON.stringify(name)}`);
    return owned;
  }

  /**
   * #asOwner under the space's write lock, which every write to the space holds too (holdForWrite): a member's
   * write under way when they are removed (or made a reader) ends first and stays; the next reads the change.
   */
  async #changeMembers<T>(caller: Caller, selector: string, activity: string, fn: (trx: DbTransaction, space: AccessibleSpace) => Promise<T>): Promise<T> {
    return this.#asOwner(caller, selector, activity, async (trx, space) => {
      await lockSubjectForWrite(trx, space.key);
      return fn(trx, space);
    });
  }

  async #asOwner<T>(caller: Caller, selector: string, activity: string, fn: (trx: DbTransaction, space: AccessibleSpace) => Promise<T>): Promise<T> {
    return this.#db.withSubject(caller, activity, async (trx) => {
      const space = await resolveSpace(trx, caller, selector, 'read');
      if (space.personal) throw invalidInput('your personal space is yours alone: make a space to share');
      if (space.role !== 'owner') throw forbidden(`only the owner of space "${space.name}" may change it or its members`);
      return fn(trx, space);
    });
  }

  async #details(trx: DbTransaction, space: AccessibleSpace): Promise<SpaceDetails> {
    if (space.personal) return { ...space, members: [], externalGroup: undefined };
    const rows = await spaceMembers(trx, space.key);
    const row = await sharedSpace(trx, space.key);
    const owner = row?.owner;
    const members: SpaceMember[] = [
      ...(owner === undefined ? [] : [{ subject: owner, name: this.#people.nameOf(owner), role: 'owner' as const }]),
      ...rows.map((member) => ({ subject: member.member, name: this.#people.nameOf(member.member), role: member.role })),
    ];
    return { ...space, members, externalGroup: row?.externalGroup };
  }
}

function checkedName(name: string): string {
  const wanted = normaliseSpaceName(name);
  const problem = spaceNameProblem(wanted);
  if (problem !== undefined) throw invalidInput(`space name ${problem}`);
  return wanted;
}
