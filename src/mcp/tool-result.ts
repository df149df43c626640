import type { ErrorCode } from '../errors.js';

/** A tools/call result: one text block holding the answer, and the same answer as structuredContent. */
export type ToolResult = ToolSuccess | ToolFailure;

export interface ToolSuccess {
  readonly content: [{ readonly type: 'text'; readonly text: string }];
  readonly structuredContent: { readonly ok: true } & Record<string, unknown>;
  readonly isError?: never;
}

/** A tool failure is a result the model can read, not a protocol error. */
export interface ToolFailure {
  readonly content: [{ readonly type: 'text'; readonly text: string }];
  readonly structuredContent: { readonly ok: false; readonly error: { readonly code: ErrorCode; readonly message: string } };
  readonly isError: true;
}

export function toolSuccess(answer: Record<string, unknown>): ToolSuccess {
  const structured = { ok: true as const, ...answer };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

export function toolFailure(code: ErrorCode, message: string): ToolFailure {
  return { content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { ok: false, error: { code, message } }, isError: true };
}
