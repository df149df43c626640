import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { importance, memoryId, optionalGivenTagList, optionalString, spaceArgument } from './arguments.js';
import { REASON_CHARS } from './forget.js';
import { memoryIdOutput, presentSpace, spaceOutput } from './output.js';
import { checkExpiresAt, REMEMBER_ERRORS, rememberInput } from './remember.js';

/** remember's arguments (same validation), less the ones that make no sense for a replacement. */
export function correctInput(maxTextChars: number) {
  return rememberInput(maxTextChars)
    .omit({ dedup_policy: true, last_confirmed_at: true })
    .extend({
      memory_id: memoryId('The memory that is wrong or out of date.'),
      tags: optionalGivenTagList('Tags of the corrected fact; omit to keep the old memory\'s tags, [] for none.'),
      importance: importance('0 to 1; omit to keep the old memory\'s importance.'),
      reason: optionalString(REASON_CHARS, 'Why it changed, briefly (e.g. "user moved in 2025"). Kept with the record; no secrets.'),
      space: spaceArgument('The space the memory is in, if you want that checked; the memory is found in any of the user\'s spaces without it, and the correction is stored in the same space.'),
    });
}

export function correctTool(service: MemoryService, maxTextChars: number): Tool {
  return defineTool({
    name: 'correct',
    title: 'Correct a memory',
    description:
      'Replace a stored memory that is wrong or out of date with the corrected fact (the user moved, changed jobs, ' +
      'or says a stored detail is wrong). `text` is the whole corrected fact as one self-contained sentence, stored ' +
      'as a new memory whose memory_id is returned; the old memory is retired and no longer recalled. Tags and ' +
      'importance carry over unless given. Same rules as remember: one fact, never secrets.',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    input: correctInput(maxTextChars),
    output: {
      memory_id: memoryIdOutput('The new memory holding the corrected fact.'),
      replaced_memory_id: memoryIdOutput('The memory it replaced (no longer recalled).'),
      space: spaceOutput,
      message: z.string(),
    },
    errors: REMEMBER_ERRORS,
    argumentNames: { note: 'reason', sourceProvider: 'source_provider', sessionId: 'session_id' },
    async run(args, context) {
      checkExpiresAt(args.expires_at);
      return service.correct(context, args.memory_id, {
        text: args.text,
        tags: args.tags,
        importance: args.importance,
        sourceProvider: args.source_provider,
        captureMode: args.capture_mode,
        sessionId: args.session_id,
        expiresAt: args.expires_at,
        note: args.reason,
      }, args.space);
    },
    present: (result) => ({
      memory_id: result.memoryId,
      replaced_memory_id: result.replacedMemoryId,
      space: presentSpace(result.space),
      message: `Corrected; memory ${result.replacedMemoryId} was replaced by memory ${result.memoryId}`,
    }),
  });
}
