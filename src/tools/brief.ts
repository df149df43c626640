import { z } from 'zod';
import type { Prompt } from '../mcp/prompt.js';
import { defineTool, type Tool } from '../mcp/tool.js';
import type { Brief } from '../memory/brief.js';
import type { MemoryService } from '../memory/memory-service.js';
import { boundedInteger, spaceArgument } from './arguments.js';
import { memoriesCount, memoryIdOutput, presentSpace, spaceOutput, timestampOutput } from './output.js';

/** About 500 tokens of memory text: small enough to load into every conversation. */
export const BRIEF_DEFAULT_CHARS = 2_000;
const BRIEF_MIN_CHARS = 200;
const BRIEF_MAX_CHARS = 10_000;

const briefInput = z.strictObject({
  max_chars: boundedInteger(
    BRIEF_MIN_CHARS,
    BRIEF_MAX_CHARS,
    BRIEF_DEFAULT_CHARS,
    `Budget on the characters of memory text in the brief (default ${BRIEF_DEFAULT_CHARS}, about ${BRIEF_DEFAULT_CHARS / 4} tokens).`,
  ),
  space: spaceArgument('The space to brief on, by name or id (see the spaces tool); omit for the user\'s personal space.'),
});

const briefMemoryOutput = z.strictObject({
  memory_id: memoryIdOutput('Use it with correct, forget or confirm.'),
  text: z.string(),
  text_truncated: z.literal(true).optional().meta({ description: 'Present when the text was shortened for the brief; recall has it whole.' }),
  tags: z.array(z.string()),
  importance: z.number().min(0).max(1),
  recalls: z.int().min(0).meta({ description: 'How many recalls have returned it.' }),
  last_confirmed_at: timestampOutput('When it was last known to be true.'),
});

const briefOutput = {
  groups: z
    .array(z.strictObject({ tag: z.string().nullable().meta({ description: 'The first tag of its memories; null: untagged.' }), memories: z.array(briefMemoryOutput) }))
    .meta({ description: 'The memories that matter most, grouped by tag, the most important group first.' }),
  shown: z.int().min(0),
  stored: z.int().min(0).meta({ description: 'How many memories are stored in the space in all.' }),
  space: spaceOutput,
  message: z.string(),
};

const DESCRIPTION =
  'Load what is known about the user at the start of every conversation, before answering the first message: a ' +
  'compact brief (at most max_chars characters of memory text) of the memories that matter most (important, ' +
  'recently confirmed or corrected, often recalled), grouped by tag, with their memory ids. Call it once per ' +
  'conversation; use recall for anything the brief does not cover.';

export function briefTool(service: MemoryService): Tool {
  return defineTool({
    name: 'brief',
    title: 'Brief about the user',
    description: DESCRIPTION,
    scope: 'memory:read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: briefInput,
    output: briefOutput,
    errors: ['INVALID_INPUT', 'NOT_FOUND', 'FORBIDDEN', 'DATABASE_ERROR'],
    run: (args, context) => service.brief(context, args.max_chars, args.space),
    present: (brief) => ({
      groups: brief.groups.map((group) => ({
        tag: group.tag,
        memories: group.memories.map((memory) => ({
          memory_id: memory.id,
          text: memory.text,
          ...(memory.textTruncated ? { text_truncated: true as const } : {}),
          tags: [...memory.tags],
          importance: memory.importance,
          recalls: memory.recalls,
          last_confirmed_at: memory.lastConfirmedAt.toISOString(),
        })),
      })),
      shown: brief.shown,
      stored: brief.stored,
      space: presentSpace(brief.space),
      message: briefHeadline(brief),
    }),
  });
}

/** The same brief as an MCP prompt, for hosts that offer prompts to the person (a slash command, a menu). */
export function briefPrompt(service: MemoryService): Prompt {
  return {
    name: 'brief',
    title: 'What you remember about me',
    description: 'Loads a compact brief of what is remembered about you into the conversation (the memories that matter most, by tag).',
    scope: 'memory:read',
    async get(context) {
      const brief = await service.brief(context.subject, BRIEF_DEFAULT_CHARS);
      return { description: briefHeadline(brief), messages: [{ role: 'user', content: { type: 'text', text: renderBrief(brief) } }] };
    },
  };
}

function briefHeadline(brief: Brief): string {
  if (brief.stored === 0) return 'No memories are stored about the user yet';
  return `${memoriesCount(brief.shown)} of ${brief.stored} stored, the ones that matter most, by tag`;
}

/** The brief as text for the conversation: one line per memory, its id in brackets. */
export function renderBrief(brief: Brief): string {
  if (brief.stored === 0) {
    return 'Memory service: nothing is stored about me yet. When I state a lasting fact about myself, remember it.';
  }
  const lines = [
    `What the memory service knows about me (${briefHeadline(brief)}; [n] is the memory_id for correct, forget or confirm; recall finds the rest):`,
  ];
  for (const group of brief.groups) {
    lines.push('', `## ${group.tag ?? 'untagged'}`);
    for (const memory of group.memories) lines.push(`- [${memory.id}] ${memory.text}${memory.textTruncated ? ' …' : ''}`);
  }
  return lines.join('\n');
}
