import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import { hasFilters } from '../memory/filters.js';
import type { MemoryService } from '../memory/memory-service.js';
import type { RecallResult } from '../memory/types.js';
import { boundedInteger, requiredText, spacesArgument } from './arguments.js';
import { filterArguments, toFilters } from './filter-arguments.js';
import { memoriesCount, memoryOutput, presentMemory, rounded, scoreOutput, timestampOutput } from './output.js';

export const RECALL_LIMITS = { queryChars: 1000, maxLimit: 50, defaultLimit: 10, minChars: 200, maxChars: 100_000, defaultChars: 10_000 } as const;

export function recallInput() {
  return z.strictObject({
    query: requiredText(
      RECALL_LIMITS.queryChars,
      'What to look for: the question, or key words, names, numbers or identifiers. Matches by meaning and by exact words.',
    ),
    limit: boundedInteger(1, RECALL_LIMITS.maxLimit, RECALL_LIMITS.defaultLimit, 'Most memories to return (default 10, at most 50).'),
    ...filterArguments,
    space: spacesArgument(
      'The space to search, by name or id, or a list of them to search at once (see the spaces tool). Omit for the user\'s personal space. Each result says which space it is in.',
    ),
    max_chars: boundedInteger(
      RECALL_LIMITS.minChars,
      RECALL_LIMITS.maxChars,
      RECALL_LIMITS.defaultChars,
      'Budget on the total characters of memory text returned (default 10000); the list stops before the first memory that would exceed it.',
    ),
  });
}

const recalledOutput = z.strictObject({
  ...memoryOutput,
  score: scoreOutput('Relevance in (0, 1]; 1 = ranked first by meaning and by words.'),
  matched_restatements: z
    .array(
      z.strictObject({
        text: z.string().meta({ description: 'A text given to remember later that was kept as stating this memory\'s fact.' }),
        text_truncated: z.literal(true).optional().meta({ description: 'Present when the text was cut (list_memories shows it whole).' }),
        created_at: timestampOutput('When it was given.'),
      }),
    )
    .optional()
    .meta({ description: 'Present when restatements of this memory matched the query, nearest first (at most 3).' }),
});

const recallOutput = {
  memories: z.array(recalledOutput).meta({ description: 'Best match first.' }),
  cut_by: z
    .enum(['limit', 'max_chars'])
    .nullable()
    .meta({ description: 'Why more matches were left out: "limit" (raise limit) or "max_chars" (raise it); null when none were.' }),
  message: z.string(),
};

export function recallTool(service: MemoryService): Tool {
  return defineTool({
    name: 'recall',
    title: 'Recall memories',
    description:
      'Search the facts stored about the user and return the most relevant ones, best first. Call it before answering ' +
      'anything that may depend on what the user said in earlier conversations (preferences, biography, relationships, ' +
      'plans, past decisions). It matches meaning (paraphrases) as well as exact names, numbers and identifiers. Use the ' +
      'filters only to narrow a search you know how to narrow. Expired memories are never returned. Each result has a ' +
      'memory_id to use with correct, forget or confirm; cut_by says whether more results were left out. A result may ' +
      'carry matched_restatements: the user\'s later wordings of the same fact, kept with it, that matched the query.',
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: recallInput(),
    output: recallOutput,
    errors: ['INVALID_INPUT', 'NOT_FOUND', 'FORBIDDEN', 'EMBEDDING_ERROR', 'DATABASE_ERROR'],
    run: (args, context) =>
      service.recall(context, { query: args.query, limit: args.limit, maxChars: args.max_chars, filters: toFilters(args), spaces: args.space }),
    present: (result, args) => presentRecall(result, hasFilters(toFilters(args))),
  });
}

function presentRecall(result: RecallResult, filtered: boolean): z.output<z.ZodObject<typeof recallOutput>> {
  const memories = result.memories.map((memory) => ({
    ...presentMemory(memory),
    score: rounded(memory.score),
    ...(memory.matchedRestatements.length === 0
      ? {}
      : {
          matched_restatements: memory.matchedRestatements.map((restatement) => ({
            text: restatement.text,
            ...(restatement.textTruncated ? { text_truncated: true as const } : {}),
            created_at: restatement.createdAt.toISOString(),
          })),
        }),
  }));
  return { memories, cut_by: result.cutBy ?? null, message: recallMessage(memories.length, result.cutBy, filtered) };
}

function recallMessage(count: number, cutBy: RecallResult['cutBy'], filtered: boolean): string {
  if (count === 0) return `No stored memory matches${filtered ? ' with these filters' : ''}`;
  const found = `${memoriesCount(count)}, best match first`;
  if (cutBy === 'limit') return `${found}; more are stored, less relevant (raise limit to see them)`;
  if (cutBy === 'max_chars') return `${found}; cut short by max_chars (raise it, or narrow the query, to see more)`;
  return found;
}
