import type { Scope } from '../auth/scopes.js';
import type { ToolContext } from './tool.js';

/** A prompts/get result: a description and the messages the host puts into the conversation. */
export interface PromptResult {
  readonly description: string;
  readonly messages: readonly { readonly role: 'user' | 'assistant'; readonly content: { readonly type: 'text'; readonly text: string } }[];
}

/** An MCP prompt without arguments: what prompts/list publishes, and the one call prompts/get makes. */
export interface Prompt {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly scope: Scope;
  get(context: ToolContext): Promise<PromptResult>;
}

export function listPrompt(prompt: Prompt): { name: string; title: string; description: string; arguments: [] } {
  return { name: prompt.name, title: prompt.title, description: prompt.description, arguments: [] };
}
