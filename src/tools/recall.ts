import { sql } from 'kysely';
import { z } from 'zod';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { MemoryService } from '../memory/memory-service.js';
import { requiredText } from './arguments.js';

// Initial vector-only recall; hybrid ranking, filters and budgets are built in issue 4.
export function recallTool(service: MemoryService): Tool {
  return defineTool({
    name: 'recall',
    title: 'Recall memories',
    description:
      'Retrieve stored facts about the user that are relevant to a question. Call it before answering anything ' +
      'that may depend on what the user told you in earlier conversations (preferences, biography, plans).',
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({
      query: requiredText(2000, 'What to look for, in natural language or as keywords.'),
      limit: z.number().int().min(1).max(50).default(10).meta({ description: 'How many memories at most (default 10).' }),
    }),
    async run(args, context) {
      const vector = await service.embed(args.query);
      const rows = await service.inTransaction(context.subject, 'recalling memories', (trx) =>
        trx
          .selectFrom('memories')
          .select(['id', 'text', 'tags', sql<number>`1 - (embedding <=> ${vector.literal}::vector)`.as('score')])
          .where('subject', '=', context.subject)
          .where('embedding_model', '=', vector.model)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
          .orderBy(sql`embedding <=> ${vector.literal}::vector`)
          .limit(args.limit)
          .execute(),
      );
      const memories = rows.map((row) => ({ memory_id: Number(row.id), text: row.text, tags: row.tags, score: Number(row.score) }));
      return { ok: true, memories, message: `${memories.length} memories found` };
    },
  });
}
