import { z } from 'zod';
import { invalidInput } from '../errors.js';
import { defineTool, type Tool } from '../mcp/tool.js';
import { hasFilters } from '../memory/filters.js';
import type { MemoryService } from '../memory/memory-service.js';
import type { ListResult } from '../memory/types.js';
import { boundedInteger, cleanString, spaceArgument } from './arguments.js';
import { filterArguments, toFilters } from './filter-arguments.js';
import { decodeCursor, encodeCursor } from './list-cursor.js';
import { listedRestatementOutput, memoriesCount, memoryOutput, presentListedRestatement, presentMemory } from './output.js';
import { RECALL_LIMITS } from './recall.js';

const listInput = z.strictObject({
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
  space: spaceArgument('The space to list, by name or id (see the spaces tool); omit for the user\'s personal space. Give the same space with the cursor.'),
});

const listOutput = {
  memories: z
    .array(
      z.strictObject({
        ...memoryOutput,
        restatements: z
          .array(listedRestatementOutput)
          .meta({ description: 'Texts given to remember later that were judged to state this same fact, kept verbatim, oldest first.' }),
      }),
    )
    .meta({ description: 'Newest first.' }),
  next_cursor: z.string().nullable().meta({ description: 'Pass it as cursor (with the same filters) for the next page; null on the last page.' }),
  message: z.string(),
};

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
    input: listInput,
    output: listOutput,
    errors: ['INVALID_INPUT', 'NOT_FOUND', 'FORBIDDEN', 'DATABASE_ERROR'],
    async run(args, context) {
      const after = args.cursor === undefined ? undefined : decodeCursor(args.cursor);
      if (args.cursor !== undefined && after === undefined) throw invalidInput('cursor: is not a cursor returned by list_memories');
      return service.list(context, {
        limit: args.limit,
        maxChars: args.max_chars,
        after,
        includeExpired: args.include_expired,
        filters: toFilters(args),
        space: args.space,
      });
    },
    present: (result, args) => presentList(result, { firstPage: args.cursor === undefined, filtered: hasFilters(toFilters(args)) }),
  });
}

function presentList(result: ListResult, request: { firstPage: boolean; filtered: boolean }): z.output<z.ZodObject<typeof listOutput>> {
  const memories = result.memories.map((memory) => ({ ...presentMemory(memory), restatements: memory.restatements.map(presentListedRestatement) }));
  const nextCursor = result.next === undefined ? null : encodeCursor(result.next);
  const message =
    memories.length === 0
      ? request.firstPage ? `No memories stored${request.filtered ? ' that match these filters' : ''}` : 'No more memories'
      : `${memoriesCount(memories.length)}, newest first` +
        (nextCursor === null ? '; this is the last page' : `; more follow${result.cutByBudget ? ' (max_chars reached)' : ''}: pass next_cursor as cursor`);
  return { memories, next_cursor: nextCursor, message };
}
