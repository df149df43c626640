import type { ListPosition } from '../memory/types.js';

/**
 * list_memories' page cursor: the position (created_at to the microsecond, id) after which the next page
 * starts, as opaque base64url text. It carries no authority: every page is read within the caller's subject,
 * so an edited cursor can only move within the caller's own memories.
 */
/** Year 0000 is excluded: PostgreSQL reads it as 1 BC through node-postgres and refuses it through PGlite. */
const POSITION = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** The position, or undefined when `text` is not one that encodeCursor produced. */
export function decodeCursor(text: string): ListPosition | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [createdAt, id]: unknown[] = value;
  if (typeof createdAt !== 'string' || !POSITION.test(createdAt)) return undefined;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return undefined;
  // Reject dates that only look valid (2024-02-31), which the database would refuse.
  const parsed = new Date(createdAt);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 19) !== createdAt.slice(0, 19)) return undefined;
  return { createdAt, id };
}
