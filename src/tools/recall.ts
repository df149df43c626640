import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { boundedInteger, requiredText } from './arguments.js';
import { filterArguments, toFilters } from './filter-arguments.js';

export const RECALL_LIMITS = { queryChars: 1000, maxLimit: 50, defaultLimit: 10, minChars: 200, maxChars: 100_000, defaultChars: 10_000 } as const;

export function recallInput() {
  return z.strictObject({
    query: requiredText(
      RECALL_LIMITS.queryChars,
      'What to look for: the question, or key words, names, numbers or identifiers. Matches by meaning and by exact words.',
    ),
    limit: boundedInteger(1, RECALL_LIMITS.maxLimit, RECALL_LIMITS.defaultLimit, 'Most memories to return (default 10, at most 50).'),
    ...filterArguments,
    max_chars: boundedInteger(
      RECALL_LIMITS.minChars,
      RECALL_LIMITS.maxChars,
      RECALL_LIMITS.defaultChars,
      'Budget on the total characters of memory text returned (default 10000); the list stops before the first memory that would exceed it.',
    ),
  });
}

export function recallTool(service: MemoryService): Tool {
  return defineTool({
    name: 'recall',
    title: 'Recall memories',
    description:
      'Search the facts stored about the user and return the most relevant ones, best first. Call it before answering ' +
      'anything that may depend on what the user said in earlier conversations (preferences, biography, relationships, ' +
      'plans, past decisions). It matches meaning (paraphrases) as well as exact names, numbers and identifiers. Use the ' +
      'filters only to narrow a search you know how to narrow. Expired memories are never returned. Each result has a ' +
      'memory_id to use with correct, forget or confirm; cut_by says whether more results were left out.',
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: recallInput(),
    async run(args, context) {
      const outcome = await service.recall(context.subject, {
        query: args.query,
        limit: args.limit,
        maxChars: args.max_chars,
        filters: toFilters(args),
      });
      return { ok: outcome.ok, memories: outcome.memories, cut_by: outcome.cut_by, message: outcome.message };
    },
  });
}
