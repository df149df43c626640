import type { Logger } from '../logger.js';
import { createLocalProvider } from './local-provider.js';
import { createOpenAIProvider } from './openai-provider.js';
import type { EmbeddingProvider } from './provider.js';

/** Which provider to build, as the configuration has validated it (src/config). */
export type EmbeddingSettings =
  | {
      readonly provider: 'local';
      /** Worker threads running the model. */
      readonly workers: number;
    }
  | {
      readonly provider: 'openai';
      /** The API's model name, without the `openai:` prefix. */
      readonly model: string;
      /** Required knowledge for unknown models; asked from the provider by ready() if not given. */
      readonly dimensions: number | undefined;
      /** Any OpenAI-compatible server; undefined = api.openai.com. */
      readonly baseUrl: string | undefined;
      readonly apiKey: string | undefined;
      /** Longest an embed() call may take, queueing and retries included. */
      readonly timeoutMs: number;
      /** Most requests in flight to the server at once. */
      readonly concurrency: number;
      /** Most embed() calls waiting for one of those; past it they fail at once. */
      readonly queueLimit: number;
    };

/** What the provider is for: serving requests, or maintenance (`reembed`), which only embeds in bulk. */
export type EmbeddingUse = 'serve' | 'maintenance';

/**
 * Builds the configured provider. Nothing is loaded or contacted here: call `ready()` to load the local model
 * or probe the OpenAI-compatible server (and learn an unknown model's dimension).
 */
export function createEmbeddingProvider(settings: EmbeddingSettings, logger?: Pick<Logger, 'debug'>, use: EmbeddingUse = 'serve'): EmbeddingProvider {
  if (settings.provider === 'local') {
    return createLocalProvider({
      workers: settings.workers,
      bulkOnly: use === 'maintenance',
      ...(logger === undefined ? {} : { onDebug: (message: string) => logger.debug(message) }),
    });
  }
  return createOpenAIProvider(settings);
}

/** How many embed() calls of different keys the configured provider serves at once: its workers or its requests in flight. */
export function embeddingParallelism(settings: EmbeddingSettings): number {
  return settings.provider === 'local' ? settings.workers : settings.concurrency;
}
