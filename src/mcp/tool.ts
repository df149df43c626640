import { z } from 'zod';
import type { Scope } from '../auth/scopes.js';
import type { Principal } from '../spaces/spaces.js';
import { isServiceError, type ErrorCode } from '../errors.js';
import { isRecord } from './protocol.js';
import { toolFailure, toolSuccess, type ToolResult } from './tool-result.js';

/** Who calls (the token's subject, and the spaces it is limited to: see Principal) and the token's scopes. */
export interface ToolContext extends Principal {
  readonly scopes: readonly string[];
}

export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** A JSON Schema with `"type": "object"` at its root, as MCP requires of inputSchema and outputSchema. */
export type ObjectJsonSchema = { readonly type: 'object' } & Readonly<Record<string, unknown>>;

/** A tool as the dispatcher sees it: what tools/list publishes, and one call taking the raw arguments. */
export interface Tool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly scope: Scope;
  readonly annotations: ToolAnnotations;
  readonly inputSchema: ObjectJsonSchema;
  readonly outputSchema: ObjectJsonSchema;
  /** Validates `args`, runs the tool and presents its answer; a ServiceError becomes a tool failure, anything else propagates. */
  call(args: unknown, context: ToolContext): Promise<ToolResult>;
}

/**
 * One tool: its zod schemas validate the input, declare the output, give tools/list its inputSchema and
 * outputSchema and TypeScript its types. `run` works in domain values; `present` turns its result into the
 * wire answer (the fields after `ok: true`).
 */
export interface ToolDefinition<Input extends z.ZodType, Output extends z.ZodRawShape, Result> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly scope: Scope;
  readonly annotations: ToolAnnotations;
  readonly input: Input;
  readonly output: Output;
  /** The codes of the failures this tool can answer with (published in its outputSchema). */
  readonly errors: readonly [ErrorCode, ...ErrorCode[]];
  /** Argument names of the inputs that errors name by their domain field (ServiceError.field), where they differ. */
  readonly argumentNames?: Readonly<Record<string, string>>;
  run(args: z.output<Input>, context: ToolContext): Promise<Result>;
  present(result: Result, args: z.output<Input>): z.output<z.ZodObject<Output>>;
}

export function defineTool<Input extends z.ZodType, Output extends z.ZodRawShape, Result>(definition: ToolDefinition<Input, Output, Result>): Tool {
  const success = z.strictObject({ ok: z.literal(true), ...definition.output });
  const failure = z.strictObject({
    ok: z.literal(false),
    error: z.strictObject({ code: z.enum(definition.errors), message: z.string() }),
  });
  const argumentName = (field: string) => definition.argumentNames?.[field] ?? field;
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    scope: definition.scope,
    annotations: definition.annotations,
    inputSchema: objectJsonSchema(definition.input, 'input'),
    outputSchema: objectJsonSchema(z.discriminatedUnion('ok', [success, failure]), 'output'),
    async call(args, context) {
      const parsed = definition.input.safeParse(args);
      if (!parsed.success) return toolFailure('INVALID_INPUT', describeZodError(parsed.error));
      try {
        return toolSuccess(definition.present(await definition.run(parsed.data, context), parsed.data));
      } catch (error) {
        if (!isServiceError(error)) throw error;
        return toolFailure(error.code, error.field === undefined ? error.message : `${argumentName(error.field)} ${error.message}`);
      }
    },
  };
}

function objectJsonSchema(schema: z.ZodType, io: 'input' | 'output'): ObjectJsonSchema {
  const { $schema: _dialect, type: _object, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return { type: 'object', ...singleTypes(rest) };
}

/**
 * The schema with every `"type": [a, b]` (zod's spelling of a nullable primitive) split into
 * `anyOf: [{type: a}, {type: b}]`: the same set of values, in the form clients that map tool schemas onto a
 * single-type dialect (Gemini's OpenAPI subset) can read; the MCP Inspector flags type arrays as unportable.
 */
function singleTypes(schema: Record<string, unknown>): Record<string, unknown> {
  const rewrite = (value: unknown): unknown => (Array.isArray(value) ? value.map(rewrite) : isRecord(value) ? singleTypes(value) : value);
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) =>
      key === 'type' && Array.isArray(value) ? ['anyOf', value.map((type: unknown) => ({ type }))] : [key, rewrite(value)],
    ),
  );
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

export interface ListedTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: ObjectJsonSchema;
  readonly outputSchema: ObjectJsonSchema;
  readonly annotations: ToolAnnotations & { readonly title: string };
}

export function listTool(tool: Tool): ListedTool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  };
}
