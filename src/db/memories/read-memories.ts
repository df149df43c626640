import { sql, type RawBuilder } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { notExpired, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryRecord } from './records.js';

/** A row as memoryColumns selects it, before conversion. */
export interface MemoryRow {
  id: string | number;
  text: string;
  text_chars: number;
  tags: string[];
  importance: number;
  capture_mode: 'explicit' | 'inferred' | null;
  source_provider: string | null;
  session_id: string | null;
  created_at: Date;
  last_confirmed_at: Date;
  expires_at: Date | null;
  space_key: string;
  author: string | null;
}

/** The columns a memory is shown with; the text cut to `maxChars` in SQL so a huge text never travels. */
export function memoryColumns(maxChars: number): RawBuilder<unknown> {
  return sql`
    id, left(text, ${maxChars}) as text, char_length(text) as text_chars, tags, importance, capture_mode,
    source_provider, session_id, created_at, last_confirmed_at, expires_at, subject as space_key, author`;
}

export function toMemoryRecord(row: MemoryRow): MemoryRecord {
  return {
    id: Number(row.id),
    text: row.text,
    textChars: Number(row.text_chars),
    tags: row.tags,
    importance: Number(row.importance),
    captureMode: row.capture_mode,
    sourceProvider: row.source_provider,
    sessionId: row.session_id,
    createdAt: row.created_at,
    lastConfirmedAt: row.last_confirmed_at,
    expiresAt: row.expires_at,
    spaceKey: row.space_key,
    author: row.author,
  };
}

/** The subject's live memories with the given ids, in no particular order. */
export async function fetchMemories(trx: DbTransaction, spaces: SpaceKeys, ids: readonly number[], maxChars: number): Promise<MemoryRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await prepared(sql<MemoryRow>`
    select ${memoryColumns(maxChars)} from memories
     where ${inSpaces('subject', spaces)} and id = any(${ids.map(String)}::bigint[]) and ${notExpired}`).execute(trx);
  return rows.map(toMemoryRecord);
}

/** One of the subject's memories, expired or not; undefined when it has none with that id. */
export async function readMemory(trx: DbTransaction, spaces: SpaceKeys, id: number, maxChars: number): Promise<MemoryRecord | undefined> {
  const { rows } = await sql<MemoryRow>`
    select ${memoryColumns(maxChars)} from memories where ${inSpaces('subject', spaces)} and id = ${id}`.execute(trx);
  return rows[0] === undefined ? undefined : toMemoryRecord(rows[0]);
}

/** The subject's tags with how many of its live memories carry each, most used first. */
export async function tagCounts(trx: DbTransaction, spaces: SpaceKeys, limit: number): Promise<{ tag: string; memories: number }[]> {
  const { rows } = await sql<{ tag: string; memories: string | number }>`
    select tag, count(*) as memories
      from memories cross join unnest(tags) as tag
     where ${inSpaces('subject', spaces)} and ${notExpired}
     group by tag
     order by count(*) desc, tag
     limit ${limit}`.execute(trx);
  return rows.map((row) => ({ tag: row.tag, memories: Number(row.memories) }));
}

/** The first `chars` of a space's latest `count` live memories (a column `text`), as a query. */
export function latestTextsQuery(subject: string, count: number, chars: number): RawBuilder<{ text: string }> {
  return sql<{ text: string }>`select left(text, ${chars}) as text from memories
    where subject = ${subject} and ${notExpired} order by created_at desc, id desc limit ${count}`;
}

/** latestTextsQuery's texts, in a statement of their own. */
export async function latestTexts(trx: DbTransaction, subject: string, count: number, chars: number): Promise<string[]> {
  const { rows } = await prepared(latestTextsQuery(subject, count, chars)).execute(trx);
  return rows.map((row) => row.text);
}
