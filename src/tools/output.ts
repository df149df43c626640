import { z } from 'zod';
import type { Memory, StoredRestatement } from '../memory/types.js';
import type { SpaceRef } from '../spaces/spaces.js';

/**
 * Building blocks of the tools' output schemas and presenters: the wire's snake_case fields, ISO 8601 strings
 * for instants and similarity and score rounded to 4 decimals.
 */

export const timestampOutput = (description: string) => z.string().meta({ format: 'date-time', description });

export const memoryIdOutput = (description: string) => z.int().min(1).meta({ description });

/** Similarity and score: 4 decimals are all a reader can use. */
export const rounded = (value: number): number => Math.round(value * 10_000) / 10_000;

export const scoreOutput = (description: string) => z.number().min(0).max(1).meta({ description });

/** The space a memory lives in. */
export const spaceOutput = z
  .strictObject({
    id: z.string().meta({ description: '"personal", or the shared space\'s id ("space:…").' }),
    name: z.string(),
  })
  .meta({ description: 'The space it is stored in.' });

export const presentSpace = (space: SpaceRef): z.output<typeof spaceOutput> => ({ id: space.id, name: space.name });

/** A memory as recall and list_memories show it. */
export const memoryOutput = {
  memory_id: memoryIdOutput('Use it with correct, forget or confirm.'),
  text: z.string(),
  text_truncated: z.literal(true).optional().meta({ description: 'Present when the text was cut to fit max_chars.' }),
  tags: z.array(z.string()),
  importance: z.number().min(0).max(1),
  capture_mode: z.enum(['explicit', 'inferred']).nullable(),
  source_provider: z.string().nullable(),
  session_id: z.string().nullable(),
  created_at: timestampOutput('When it was stored.'),
  last_confirmed_at: timestampOutput('When it was last known to be true.'),
  expires_at: timestampOutput('After this, it is no longer recalled.').nullable(),
  space: spaceOutput,
};

export function presentMemory(memory: Memory): z.output<z.ZodObject<typeof memoryOutput>> {
  return {
    memory_id: memory.id,
    text: memory.text,
    ...(memory.textTruncated ? { text_truncated: true as const } : {}),
    tags: [...memory.tags],
    importance: memory.importance,
    capture_mode: memory.captureMode,
    source_provider: memory.sourceProvider,
    session_id: memory.sessionId,
    created_at: memory.createdAt.toISOString(),
    last_confirmed_at: memory.lastConfirmedAt.toISOString(),
    expires_at: memory.expiresAt === null ? null : memory.expiresAt.toISOString(),
    space: presentSpace(memory.space),
  };
}

/** A restatement as list_memories shows it: everything stored with it. */
export const listedRestatementOutput = z.strictObject({
  restatement_id: memoryIdOutput('Its id (the web page can make it a memory of its own).'),
  text: z.string().meta({ description: 'The text as it was given to remember.' }),
  tags: z.array(z.string()),
  capture_mode: z.enum(['explicit', 'inferred']).nullable(),
  source_provider: z.string().nullable(),
  session_id: z.string().nullable(),
  created_at: timestampOutput('When it was given.'),
});

export function presentListedRestatement(restatement: StoredRestatement): z.output<typeof listedRestatementOutput> {
  return {
    restatement_id: restatement.id,
    text: restatement.text,
    tags: [...restatement.tags],
    capture_mode: restatement.captureMode,
    source_provider: restatement.sourceProvider,
    session_id: restatement.sessionId,
    created_at: restatement.createdAt.toISOString(),
  };
}

/** "1 memory", "3 memories". */
export const memoriesCount = (count: number): string => `${count} ${count === 1 ? 'memory' : 'memories'}`;
