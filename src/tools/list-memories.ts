import { z } from 'zod';
import { invalidInput } from '../errors.js';
import { defineTool, type Tool } from '../mcp/tool.js';
import { decodeCursor } from '../memory/list-cursor.js';
import type { MemoryService } from '../memory/memory-service.js';
import { boundedInteger, cleanString } from './arguments.js';
import { filterArguments, toFilters } from './filter-arguments.js';
import { RECALL_LIMITS } from './recall.js';

export function listMemoriesTool(service: MemoryService): Tool {
  return defineTool({
    name: 'list_memories',
    title: 'List memories',
    description:
      'Browse the facts stored about the user, newest first, one page at a time: for reviewing what is stored ' +
      '("what do you remember about me?") or finding a memory_id to correct or forget. To answer a question, use ' +
      'recall instead. When next_cursor is not null, pass it as cursor (with the same filters) for the next page.',
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({
      limit: boundedInteger(1, 100, 20, 'Most memories on this page (default 20, at most 100).'),
      cursor: cleanString()
        .max(200, 'is not a cursor returned by list_memories')
        .nullish()
        .transform((value) => value ?? undefined)
        .meta({ description: 'next_cursor from the previous page; omit for the first page.' }),
      ...filterArguments,
      include_expired: z
        .boolean({ error: 'must be true or false' })
        .nullish()
        .transform((value) => value ?? false)
        .meta({ description: 'Also list memories whose expires_at has passed (default false).' }),
      max_chars: boundedInteger(
        RECALL_LIMITS.minChars,
        RECALL_LIMITS.maxChars,
        RECALL_LIMITS.defaultChars,
        'Budget on the total characters of memory text on this page (default 10000); the page ends before the first memory that would exceed it.',
      ),
    }),
    async run(args, context) {
      const cursor = args.cursor === undefined ? undefined : decodeCursor(args.cursor);
      if (args.cursor !== undefined && cursor === undefined) throw invalidInput('cursor: is not a cursor returned by list_memories');
      return {
        ...(await service.listMemories(context.subject, {
          limit: args.limit,
          maxChars: args.max_chars,
          cursor,
          includeExpired: args.include_expired,
          filters: toFilters(args),
        })),
      };
    },
  });
}
