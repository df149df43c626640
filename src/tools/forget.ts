import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { memoryId, optionalString, spaceArgument } from './arguments.js';
import { memoryIdOutput, presentSpace, spaceOutput } from './output.js';

export const REASON_CHARS = 500;

export function forgetTool(service: MemoryService): Tool {
  return defineTool({
    name: 'forget',
    title: 'Forget a memory',
    description:
      'Delete one stored memory so that it is never recalled again: when the user asks you to forget something, or a ' +
      'stored fact is simply no longer true. Give the memory_id from recall or list_memories. If the fact changed ' +
      '(new city, new job), use correct instead so the new fact is kept. A note that the fact was forgotten is kept, ' +
      'so remember can warn if the same fact is stored again.',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({
      memory_id: memoryId('The memory to forget.'),
      reason: optionalString(REASON_CHARS, 'Why it is forgotten, briefly (e.g. "user asked"). Kept with the record; no secrets.'),
      space: spaceArgument('The space the memory is in, if you want that checked; the memory is found in any of the user\'s spaces without it.'),
    }),
    output: { memory_id: memoryIdOutput('The forgotten memory.'), space: spaceOutput, message: z.string() },
    errors: ['INVALID_INPUT', 'SECRET_REJECTED', 'NOT_FOUND', 'FORBIDDEN', 'DATABASE_ERROR'],
    argumentNames: { note: 'reason' },
    run: (args, context) => service.forget(context, args.memory_id, args.reason, args.space),
    present: (result) => ({ memory_id: result.memoryId, space: presentSpace(result.space), message: 'Forgotten; it will not be recalled again' }),
  });
}
