import { z } from 'zod';
import { invalidInput } from '../errors.js';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { givenTagList, importance, optionalEnum, optionalString, requiredText, timestamp } from './arguments.js';

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
    session_id: optionalString(200, 'Opaque identifier of the current conversation, stored as given.'),
    dedup_policy: optionalEnum(
      ['insert', 'skip_if_near', 'ask'],
      'Near-duplicate handling: "ask" (default) inserts and lists similar memories; "skip_if_near" does not insert when the same fact is already stored and returns its id; "insert" skips the check.',
      'ask',
    ),
    expires_at: timestamp('When the fact stops being true (ISO 8601 with time zone); recall ignores it afterwards.'),
    last_confirmed_at: timestamp('When the fact was last verified (ISO 8601 with time zone); defaults to now.'),
  });
}

export function rememberTool(service: MemoryService, maxTextChars: number): Tool {
  return defineTool({
    name: 'remember',
    title: 'Remember a fact',
    description:
      'Store one durable fact about the user for future conversations: preferences, biography, relationships, ' +
      'plans, decisions. Call it when the user asks you to remember something, or when they state a lasting fact ' +
      'worth keeping. One fact per call. Never store secrets (passwords, API keys, tokens). If the result lists ' +
      'near_duplicates or previously_corrected, consider whether the user is updating an earlier fact.',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: rememberInput(maxTextChars),
    async run(args, context) {
      checkExpiresAt(args.expires_at);
      if (args.last_confirmed_at !== undefined && args.last_confirmed_at.getTime() > Date.now() + CLOCK_SKEW_MS) {
        throw invalidInput('last_confirmed_at: must not be in the future');
      }
      const outcome = await service.remember(
        context.subject,
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
      );
      return { ...outcome };
    },
  });
}

/** A memory that has already expired would never be recalled: refuse it rather than store it silently. */
export function checkExpiresAt(expiresAt: Date | undefined): void {
  if (expiresAt !== undefined && expiresAt.getTime() <= Date.now()) throw invalidInput('expires_at: must be in the future');
}
