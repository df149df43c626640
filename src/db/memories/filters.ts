import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { MemoryFilters } from './records.js';

/**
 * The spaces a read covers, by key (the `subject` column of every space-keyed table, migration 0020): one, or
 * several (a recall over several spaces).
 */
export type SpaceKeys = string | readonly string[];

/** `column` is one of `spaces`: a plain equality for one space, so that its plans are those of one subject. */
export function inSpaces(column: string, spaces: SpaceKeys): RawBuilder<SqlBool> {
  if (typeof spaces === 'string') return sql<SqlBool>`${sql.ref(column)} = ${spaces}`;
  if (spaces.length === 1) return sql<SqlBool>`${sql.ref(column)} = ${spaces[0]}`;
  return sql<SqlBool>`${sql.ref(column)} = any(${[...spaces]}::text[])`;
}

/**
 * The WHERE conditions shared by recall and list_memories, over unqualified columns of `memories`.
 * The space condition is always first: every query is scoped in SQL, row-level security being only
 * the second line of defence.
 */
export function memoryConditions(spaces: SpaceKeys, filters: MemoryFilters, options: { includeExpired?: boolean } = {}): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = [inSpaces('subject', spaces)];
  if (options.includeExpired !== true) conditions.push(notExpired);
  if (filters.tags.length > 0) {
    // Both operators are served by the GIN index on tags.
    const tags = sql`${[...filters.tags]}::text[]`;
    conditions.push(filters.tagMatch === 'all' ? sql`tags @> ${tags}` : sql`tags && ${tags}`);
  }
  if (filters.sessionId !== undefined) conditions.push(sql`session_id = ${filters.sessionId}`);
  if (filters.captureMode !== undefined) conditions.push(sql`capture_mode = ${filters.captureMode}`);
  if (filters.sourceProvider !== undefined) conditions.push(sql`source_provider = ${filters.sourceProvider}`);
  if (filters.createdAfter !== undefined) conditions.push(sql`created_at >= ${filters.createdAfter.toISOString()}::timestamptz`);
  if (filters.createdBefore !== undefined) conditions.push(sql`created_at < ${filters.createdBefore.toISOString()}::timestamptz`);
  return sql.join(conditions, sql` and `);
}

/** Expiry is enforced in SQL, against the database clock. */
export const notExpired: RawBuilder<SqlBool> = sql<SqlBool>`(expires_at is null or expires_at > now())`;

/** Whether any filter beyond the subject (and expiry) is set. */
export function hasFilters(filters: MemoryFilters): boolean {
  return (
    filters.tags.length > 0 ||
    [filters.sessionId, filters.captureMode, filters.sourceProvider, filters.createdAfter, filters.createdBefore].some((value) => value !== undefined)
  );
}

/** No filter at all: every live memory of the subject. */
export const NO_FILTERS: MemoryFilters = {
  tags: [],
  tagMatch: 'any',
  sessionId: undefined,
  captureMode: undefined,
  sourceProvider: undefined,
  createdAfter: undefined,
  createdBefore: undefined,
};
