import { z } from 'zod';
import { invalidInput } from '../errors.js';
import type { ImportItem, ImportSource } from '../memory/types.js';
import { givenTagList, importance, memoryId, optionalEnum, optionalString, requiredText, timestamp } from '../tools/arguments.js';
import { REASON_CHARS } from '../tools/forget.js';
import { EXPORT_FORMAT, READABLE_EXPORT_VERSIONS } from './export-format.js';

/**
 * Reads one line of an import file, whichever of the two formats it is in (detected line by line):
 *
 * - this service's export (export-format.ts): a header, `"type": "memory"` and `"type": "tombstone"` lines,
 *   checked field by field like remember's arguments (same rules, same messages); unknown fields are refused;
 * - the official MCP memory server's `memory.jsonl`: `{"type":"entity","name","entityType","observations":[…]}`
 *   gives one memory per observation, tagged with the entity's name and type; `{"type":"relation","from","to",
 *   "relationType"}` gives the memory "from relationType to", tagged with both names. Other fields are ignored.
 *
 * A line that cannot be used becomes a `refused` item naming the line and why, never repeating its text.
 */

/** What imported MCP memory-server lines are marked with, so they can be told apart (and filtered). */
export const MCP_MEMORY_SOURCE = 'mcp-memory-server';

/**
 * Most observations one entity line may carry: each becomes a memory, and a line is read in one turn of the event
 * loop (issue 38: one entity of 5 million observations held the server 37 s and 3 GB). The official server's
 * entities have a handful.
 */
export const MAX_ENTITY_OBSERVATIONS = 10_000;

/** Clock skew allowed for times that must not lie in the future (as remember's last_confirmed_at). */
const CLOCK_SKEW_MS = 60_000;

const requiredTimestamp = (description: string) =>
  timestamp(description).transform((value, context) => {
    if (value === undefined) {
      context.addIssue({ code: 'custom', message: 'is required' });
      return z.NEVER;
    }
    return value;
  });

const formerId = memoryId('The id it had where it was exported.')
  .nullish()
  .transform((value) => value ?? undefined);

const ignored = z.string().nullish();

/** Most restatements one line may carry: far more than remember keeps of one fact in practice. */
const MAX_RESTATEMENTS = 1000;

/** A memory's or tombstone's restatements (format 2); absent in version 1 files: none. */
function restatementList(maxTextChars: number) {
  return z
    .array(
      z.strictObject({
        text: requiredText(maxTextChars, 'The restating text.'),
        tags: givenTagList('Tags.'),
        source_provider: optionalString(200, 'Who produced it.'),
        capture_mode: optionalEnum(['explicit', 'inferred'], 'Provenance.', undefined),
        session_id: optionalString(200, 'Conversation id.'),
        created_at: requiredTimestamp('When it was stored.'),
      }),
      { error: 'must be an array of restatements' },
    )
    .max(MAX_RESTATEMENTS, `must have at most ${MAX_RESTATEMENTS} items`)
    .optional()
    .transform((items) =>
      (items ?? []).map((item) => ({
        text: item.text,
        tags: item.tags,
        sourceProvider: item.source_provider ?? null,
        captureMode: item.capture_mode ?? null,
        sessionId: item.session_id ?? null,
        createdAt: item.created_at,
      })),
    );
}

function memoryLine(maxTextChars: number) {
  return z.strictObject({
    type: z.literal('memory'),
    memory_id: formerId,
    text: requiredText(maxTextChars, 'The fact.'),
    tags: givenTagList('Tags.'),
    importance: importance('0 to 1.').transform((value) => value ?? 0.5),
    capture_mode: optionalEnum(['explicit', 'inferred'], 'Provenance.', undefined),
    source_provider: optionalString(200, 'Who produced it.'),
    session_id: optionalString(200, 'Conversation id.'),
    created_at: timestamp('When it was stored.'),
    updated_at: timestamp('When it last changed.'),
    last_confirmed_at: timestamp('When it was last known to be true.'),
    expires_at: timestamp('When it stops being true.'),
    embedding_model: ignored,
    restatements: restatementList(maxTextChars),
  });
}

function tombstoneLine(maxTextChars: number) {
  return z.strictObject({
    type: z.literal('tombstone'),
    memory_id: formerId,
    text: requiredText(maxTextChars, 'The old text.'),
    tags: givenTagList('Tags.'),
    reason: z.enum(['corrected', 'forgotten'], { error: 'must be "corrected" or "forgotten"' }),
    replaced_by: formerId,
    note: optionalString(REASON_CHARS, 'Why.'),
    memory_created_at: requiredTimestamp('When the memory was stored.'),
    tombstoned_at: requiredTimestamp('When it was corrected or forgotten.'),
    embedding_model: ignored,
    restatements: restatementList(maxTextChars),
  });
}

const name = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty');

const entityLine = z.looseObject({
  type: z.literal('entity'),
  name,
  entityType: name,
  observations: z
    .array(z.unknown(), { error: 'must be an array of strings' })
    .max(MAX_ENTITY_OBSERVATIONS, `has more than ${MAX_ENTITY_OBSERVATIONS} entries, the most one entity may have (split it into several entities)`),
});

const relationLine = z.looseObject({ type: z.literal('relation'), from: name, to: name, relationType: name });

const headerLine = z.looseObject({ format: z.literal(EXPORT_FORMAT), version: z.unknown() });

export class ImportLineReader {
  readonly #memory: ReturnType<typeof memoryLine>;
  readonly #tombstone: ReturnType<typeof tombstoneLine>;
  readonly #observation: ReturnType<typeof requiredText>;

  constructor(maxTextChars: number) {
    this.#memory = memoryLine(maxTextChars);
    this.#tombstone = tombstoneLine(maxTextChars);
    this.#observation = requiredText(maxTextChars, 'An observation.');
  }

  /**
   * The items of one line (none for a blank line or a header). A header of another version of the export
   * format throws INVALID_INPUT: the whole file is then read as nothing, rather than half understood.
   */
  read(line: number, text: string): ImportItem[] {
    if (text.trim() === '') return [];
    const source: ImportSource = { line };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [refused(source, 'not valid JSON')];
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [refused(source, 'not a JSON object')];
    const header = headerLine.safeParse(value);
    if (header.success) {
      if (typeof header.data.version !== 'number' || !READABLE_EXPORT_VERSIONS.includes(header.data.version)) {
        throw invalidInput(`line ${line}: this file is a version of the export format this service cannot read (it reads versions ${READABLE_EXPORT_VERSIONS.join(' and ')})`);
      }
      return [];
    }
    switch ((value as { type?: unknown }).type) {
      case 'memory':
        return [this.#readMemory(source, value)];
      case 'tombstone':
        return [this.#readTombstone(source, value)];
      case 'entity':
        return this.#readEntity(source, value);
      case 'relation':
        return [readRelation(source, value)];
      default:
        return [refused(source, 'type must be "memory" or "tombstone" (this service\'s export) or "entity" or "relation" (MCP memory server)')];
    }
  }

  #readMemory(source: ImportSource, value: unknown): ImportItem {
    const parsed = this.#memory.safeParse(value);
    if (!parsed.success) return refused(source, describeIssues(parsed.error));
    const line = parsed.data;
    const future = [
      ['created_at', line.created_at],
      ['updated_at', line.updated_at],
      ['last_confirmed_at', line.last_confirmed_at],
    ].find(([, at]) => at instanceof Date && at.getTime() > Date.now() + CLOCK_SKEW_MS);
    if (future !== undefined) return refused(source, `${String(future[0])}: must not be in the future`);
    return {
      kind: 'memory',
      source,
      memory: {
        text: line.text,
        tags: line.tags,
        importance: line.importance,
        captureMode: line.capture_mode,
        sourceProvider: line.source_provider,
        sessionId: line.session_id,
        expiresAt: line.expires_at,
        lastConfirmedAt: line.last_confirmed_at,
      },
      timestamps: line.created_at === undefined ? undefined : { createdAt: line.created_at, updatedAt: line.updated_at ?? line.created_at },
      formerId: line.memory_id,
      restatements: line.restatements,
    };
  }

  #readTombstone(source: ImportSource, value: unknown): ImportItem {
    const parsed = this.#tombstone.safeParse(value);
    if (!parsed.success) return refused(source, describeIssues(parsed.error));
    const line = parsed.data;
    return {
      kind: 'tombstone',
      source,
      text: line.text,
      tags: line.tags,
      reason: line.reason,
      note: line.note,
      memoryCreatedAt: line.memory_created_at,
      tombstonedAt: line.tombstoned_at,
      formerId: line.memory_id,
      formerReplacedBy: line.replaced_by,
      restatements: line.restatements,
    };
  }

  #readEntity(source: ImportSource, value: unknown): ImportItem[] {
    const parsed = entityLine.safeParse(value);
    if (!parsed.success) return [refused(source, describeIssues(parsed.error))];
    const { name: entity, entityType, observations } = parsed.data;
    return observations.map((observation, index): ImportItem => {
      const part = { line: source.line, part: `observations[${index}]` };
      const text = this.#observation.safeParse(observation);
      if (!text.success) return refused(part, describeIssues(text.error, 'text'));
      return mcpMemory(part, text.data, [entity, entityType]);
    });
  }
}

function readRelation(source: ImportSource, value: unknown): ImportItem {
  const parsed = relationLine.safeParse(value);
  if (!parsed.success) return refused(source, describeIssues(parsed.error));
  const { from, to, relationType } = parsed.data;
  return mcpMemory(source, `${from} ${relationType} ${to}`, [from, to]);
}

function mcpMemory(source: ImportSource, text: string, tags: string[]): ImportItem {
  return {
    kind: 'memory',
    source,
    memory: {
      text,
      tags,
      importance: 0.5,
      captureMode: undefined,
      sourceProvider: MCP_MEMORY_SOURCE,
      sessionId: undefined,
      expiresAt: undefined,
      lastConfirmedAt: undefined,
    },
    timestamps: undefined,
    formerId: undefined,
    restatements: [],
  };
}

const refused = (source: ImportSource, reason: string): ImportItem => ({ kind: 'refused', source, reason });

/**
 * "text: must not be blank; unknown field "colour"". Messages name fields, never values. `subject` names a
 * value parsed on its own (an observation), whose issues have no path.
 */
function describeIssues(error: z.ZodError, subject?: string): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
      const path = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : String(key))).join('.').replace(/\.\[/g, '[');
      if (path === '') return subject === undefined ? issue.message : `${subject}: ${issue.message}`;
      return issue.message.startsWith(path) ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}
