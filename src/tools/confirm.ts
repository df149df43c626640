import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { memoryId } from './arguments.js';
import { memoryIdOutput, timestampOutput } from './output.js';

export function confirmTool(service: MemoryService): Tool {
  return defineTool({
    name: 'confirm',
    title: 'Confirm a memory',
    description:
      'Record that a stored memory is still true as of now (sets its last_confirmed_at), when the user has just ' +
      'reaffirmed it. Give the memory_id from recall or list_memories. If any detail changed, use correct instead.',
    scope: 'memory:write',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: z.strictObject({ memory_id: memoryId('The memory the user has just reaffirmed.') }),
    output: {
      memory_id: memoryIdOutput('The confirmed memory.'),
      last_confirmed_at: timestampOutput('Now, as the database clock has it.'),
      message: z.string(),
    },
    errors: ['INVALID_INPUT', 'NOT_FOUND', 'DATABASE_ERROR'],
    run: (args, context) => service.confirm(context.subject, args.memory_id),
    present: (result) => ({
      memory_id: result.memoryId,
      last_confirmed_at: result.lastConfirmedAt.toISOString(),
      message: 'Confirmed as still true',
    }),
  });
}
