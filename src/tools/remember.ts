import { z } from 'zod';
import { invalidInput } from '../errors.js';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import type { DedupPolicy, NearMemory, RememberResult, TombstoneMatch } from '../memory/types.js';
import { givenTagList, importance, optionalEnum, optionalString, requiredText, spaceArgument, timestamp } from './arguments.js';
import { memoryIdOutput, presentSpace, rounded, scoreOutput, spaceOutput, timestampOutput } from './output.js';

/** Allowed clock skew for last_confirmed_at ("now" on the caller's clock may be slightly ahead of ours). */
const CLOCK_SKEW_MS = 60_000;

export function rememberInput(maxTextChars: number) {
  return z.strictObject({
    text: requiredText(
      maxTextChars,
      'The fact to remember, as one self-contained sentence about the user (e.g. "The user is allergic to penicillin"). No secrets.',
    ),
    tags: givenTagList('Short topic labels, e.g. ["health", "allergies"]. Normalised to lowercase.'),
    source_provider: optionalString(200, 'Name of the LLM or client producing this memory, for auditing.'),
    importance: importance('How important the fact is, 0 to 1 (default 0.5). Stored; not used in ranking yet.').transform(
      (value) => value ?? 0.5,
    ),
    capture_mode: optionalEnum(
      ['explicit', 'inferred'],
      '"explicit" when the user asked you to remember this; "inferred" when you decided it is worth keeping.',
      undefined,
    ),
    session_id: optionalString(200, 'Opaque identifier of the current conversation, stored as given. Recall uses it to find what was said right after a match in the same conversation.'),
    dedup_policy: optionalEnum(
      ['insert', 'skip_if_near', 'ask'],
      'Near-duplicate handling: "ask" (default) inserts and lists similar memories; "skip_if_near" does not store a new memory when the same fact is already stored: it returns that memory\'s id and text (matched_text), keeps the new text verbatim as a restatement of it and marks it confirmed; "insert" skips the check.',
      'ask',
    ),
    expires_at: timestamp('When the fact stops being true (ISO 8601 with time zone); recall ignores it afterwards.'),
    last_confirmed_at: timestamp('When the fact was last verified (ISO 8601 with time zone); defaults to now.'),
    space: spaceArgument(
      'The space to store it in, by name or id (see the spaces tool). Omit for the user\'s personal space; name a shared space (a household, a team) only for a fact meant for everyone in it.',
    ),
  });
}

const nearDuplicateOutput = z.strictObject({
  memory_id: memoryIdOutput('The similar memory.'),
  text: z.string(),
  similarity: scoreOutput('Cosine similarity to the new text, 1 = same meaning.'),
  tags: z.array(z.string()),
  created_at: timestampOutput('When it was stored.'),
  last_confirmed_at: timestampOutput('When it was last known to be true.'),
});

const previouslyCorrectedOutput = z.strictObject({
  memory_id: memoryIdOutput('The memory that was corrected or forgotten.'),
  text: z.string().meta({ description: 'Its old text.' }),
  reason: z.enum(['corrected', 'forgotten']),
  replaced_by: memoryIdOutput('The memory holding the correction.').optional(),
  note: z.string().optional().meta({ description: 'Why it was corrected or forgotten.' }),
  similarity: scoreOutput('Cosine similarity to the new text.'),
  tombstoned_at: timestampOutput('When it was corrected or forgotten.'),
});

const rememberOutput = {
  memory_id: memoryIdOutput('The stored memory, or the one already stating the same fact ("Already remembered").'),
  space: spaceOutput,
  message: z.string(),
  matched_text: z
    .string()
    .optional()
    .meta({ description: 'When already remembered: the stored memory\'s text the new one was judged to state. The new text is kept verbatim as its restatement.' }),
  near_duplicates: z.array(nearDuplicateOutput).optional().meta({ description: 'Similar stored memories, best first (under "ask", and when already remembered).' }),
  previously_corrected: z
    .array(previouslyCorrectedOutput)
    .optional()
    .meta({ description: 'Corrected or forgotten memories near the new text: the user may be repeating an outdated fact.' }),
};

/** The errors remember can answer with; correct can answer them too. */
export const REMEMBER_ERRORS = ['INVALID_INPUT', 'SECRET_REJECTED', 'QUOTA_EXCEEDED', 'NOT_FOUND', 'FORBIDDEN', 'EMBEDDING_ERROR', 'DATABASE_ERROR'] as const;

export function rememberTool(service: MemoryService, maxTextChars: number): Tool {
  return defineTool({
    name: 'remember',
    title: 'Remember a fact',
    description:
      'Store one durable fact about the user for future conversations: preferences, biography, relationships, ' +
      'plans, decisions. Call it when the user asks you to remember something, or when they state a lasting fact ' +
      'worth keeping. One fact per call. Never store secrets (passwords, API keys, tokens). If the result lists ' +
      'near_duplicates or previously_corrected, consider whether the user is updating an earlier fact. "Already remembered" ' +
      '(skip_if_near) gives matched_text, the stored fact your text was judged to restate; your text is kept with it, ' +
      'never lost; if matched_text says something different, remember yours again with dedup_policy "insert".',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: rememberInput(maxTextChars),
    output: rememberOutput,
    errors: REMEMBER_ERRORS,
    argumentNames: { sourceProvider: 'source_provider', sessionId: 'session_id' },
    async run(args, context) {
      checkExpiresAt(args.expires_at);
      if (args.last_confirmed_at !== undefined && args.last_confirmed_at.getTime() > Date.now() + CLOCK_SKEW_MS) {
        throw invalidInput('last_confirmed_at: must not be in the future');
      }
      return service.remember(
        context,
        {
          text: args.text,
          tags: args.tags,
          sourceProvider: args.source_provider,
          importance: args.importance,
          captureMode: args.capture_mode,
          sessionId: args.session_id,
          expiresAt: args.expires_at,
          lastConfirmedAt: args.last_confirmed_at,
        },
        args.dedup_policy,
        args.space,
      );
    },
    present: (result, args) => presentRemember(result, args.dedup_policy),
  });
}

function presentRemember(result: RememberResult, policy: DedupPolicy): z.output<z.ZodObject<typeof rememberOutput>> {
  const near = result.nearDuplicates.map(presentNearDuplicate);
  if (result.status === 'already_stored') {
    return { memory_id: result.memoryId, space: presentSpace(result.space), message: 'Already remembered', ...(result.matchedText === undefined ? {} : { matched_text: result.matchedText }), near_duplicates: near };
  }
  const corrected = result.previouslyCorrected;
  const notes = [
    near.length > 0 ? `${near.length} similar ${near.length === 1 ? 'memory exists' : 'memories exist'} (see near_duplicates)` : '',
    corrected.length > 0 ? 'a similar fact was corrected or forgotten before (see previously_corrected)' : '',
  ].filter((note) => note !== '');
  return {
    memory_id: result.memoryId,
    space: presentSpace(result.space),
    message: notes.length === 0 ? 'Remembered' : `Remembered; ${notes.join('; ')}`,
    // Under ask always; under skip_if_near whenever the message names similar memories (the spec's fields plus that).
    ...(policy === 'ask' || near.length > 0 ? { near_duplicates: near } : {}),
    ...(corrected.length > 0 ? { previously_corrected: corrected.map(presentPreviouslyCorrected) } : {}),
  };
}

function presentNearDuplicate(near: NearMemory): z.output<typeof nearDuplicateOutput> {
  return {
    memory_id: near.id,
    text: near.text,
    similarity: rounded(near.similarity),
    tags: [...near.tags],
    created_at: near.createdAt.toISOString(),
    last_confirmed_at: near.lastConfirmedAt.toISOString(),
  };
}

function presentPreviouslyCorrected(match: TombstoneMatch): z.output<typeof previouslyCorrectedOutput> {
  return {
    memory_id: match.memoryId,
    text: match.text,
    reason: match.reason,
    ...(match.replacedBy === undefined ? {} : { replaced_by: match.replacedBy }),
    ...(match.note === undefined ? {} : { note: match.note }),
    similarity: rounded(match.similarity),
    tombstoned_at: match.tombstonedAt.toISOString(),
  };
}

/** A memory that has already expired would never be recalled: refuse it rather than store it silently. */
export function checkExpiresAt(expiresAt: Date | undefined): void {
  if (expiresAt !== undefined && expiresAt.getTime() <= Date.now()) throw invalidInput('expires_at: must be in the future');
}
