import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { memoryId, spaceArgument } from './arguments.js';
import { memoryIdOutput, presentSpace, spaceOutput, timestampOutput } from './output.js';

export function confirmTool(service: MemoryService): Tool {
  return defineTool({
    name: 'confirm',
    title: 'Confirm a memory',
    description:
      'Record that a stored memory is still true as of now (sets its last_confirmed_at), when the user has just ' +
      'reaffirmed it. Give the memory_id from recall or list_memories. If any detail changed, use correct instead.',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: z.strictObject({
      memory_id: memoryId('The memory the user has just reaffirmed.'),
      space: spaceArgument('The space the memory is in, if you want that checked; the memory is found in any of the user\'s spaces without it.'),
    }),
    output: {
      memory_id: memoryIdOutput('The confirmed memory.'),
      last_confirmed_at: timestampOutput('Now, as the database clock has it.'),
      space: spaceOutput,
      message: z.string(),
    },
    errors: ['INVALID_INPUT', 'NOT_FOUND', 'FORBIDDEN', 'DATABASE_ERROR'],
    run: (args, context) => service.confirm(context, args.memory_id, args.space),
    present: (result) => ({
      memory_id: result.memoryId,
      last_confirmed_at: result.lastConfirmedAt.toISOString(),
      space: presentSpace(result.space),
      message: 'Confirmed as still true',
    }),
  });
}
