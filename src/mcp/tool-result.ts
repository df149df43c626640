import { isServiceError, type ErrorCode } from '../errors.js';

export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: true;
}

export function toolSuccess(structured: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool failure is a result the model can read, not a protocol error. */
export function toolFailure(code: ErrorCode, message: string): ToolResult {
  const structured = { ok: false, error: { code, message } };
  return { content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: structured, isError: true };
}

/** Maps a thrown value to a tool failure, or returns undefined when it is not one of ours (a bug). */
export function toolFailureFrom(error: unknown): ToolResult | undefined {
  return isServiceError(error) ? toolFailure(error.code, error.message) : undefined;
}
