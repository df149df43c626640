import { z } from 'zod';
import type { Scope } from '../auth/scopes.js';

export interface ToolContext {
  readonly subject: string;
  readonly scopes: readonly string[];
}

export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/**
 * A tool: one zod schema validates the arguments, gives the handler its type and produces the
 * `inputSchema` that tools/list returns.
 */
export interface Tool<Input extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly scope: Scope;
  readonly annotations: ToolAnnotations;
  readonly input: Input;
  run(args: z.output<Input>, context: ToolContext): Promise<Record<string, unknown>>;
}

export function defineTool<Input extends z.ZodType>(tool: Tool<Input>): Tool {
  return tool as unknown as Tool;
}

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: ToolAnnotations & { title: string };
}

export function listTool(tool: Tool): ListedTool {
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/** "tags[2]: must be a string" — names the argument and the rule. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.reduce<string>(
        (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc === '' ? String(key) : `${acc}.${String(key)}`),
        '',
      );
      if (issue.code === 'unrecognized_keys') {
        return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
      }
      // Messages that already name their argument (e.g. "tags[1] is empty ...") are kept as they are.
      return path === '' || issue.message.startsWith(path) ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}
