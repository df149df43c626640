import { ServiceError } from '../errors.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME, createLocalProvider } from './local-provider.js';
import { createOpenAIProvider } from './openai-provider.js';
import type { EmbeddingProvider } from './provider.js';

export interface EmbeddingSettings {
  provider: 'local' | 'openai';
  model?: string | undefined;
  openaiBaseUrl?: string | undefined;
  openaiApiKey?: string | undefined;
  dimensions?: number | undefined;
}

export const DEFAULT_OPENAI_MODEL = 'text-embedding-3-small';

const configInvalid = (message: string): ServiceError => new ServiceError('CONFIG_INVALID', message);

const blankToUndefined = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
};

/**
 * Builds the configured provider. Nothing is loaded or contacted here: call `ready()` to load
 * the local model or probe the OpenAI-compatible server (and learn an unknown model's dimension).
 * Throws CONFIG_INVALID for settings that can never work.
 */
export function createEmbeddingProvider(settings: EmbeddingSettings): EmbeddingProvider {
  const model = blankToUndefined(settings.model);
  const { dimensions } = settings;
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1)) {
    throw configInvalid(`embedding dimensions must be a positive integer, got ${String(dimensions)}`);
  }

  switch (settings.provider) {
    case 'local': {
      const shortName = LOCAL_MODEL_NAME.slice('local:'.length);
      if (model !== undefined && model !== LOCAL_MODEL_NAME && model !== shortName) {
        throw configInvalid(
          `the local embedding provider only supports ${LOCAL_MODEL_NAME}, not "${model}"; use provider "openai" for other models`,
        );
      }
      if (dimensions !== undefined && dimensions !== LOCAL_MODEL_DIMENSIONS) {
        throw configInvalid(`the local embedding model has ${LOCAL_MODEL_DIMENSIONS} dimensions, not ${dimensions}`);
      }
      return createLocalProvider();
    }
    case 'openai': {
      const apiModel = (model ?? DEFAULT_OPENAI_MODEL).replace(/^openai:/, '');
      if (apiModel === '') throw configInvalid('embedding model name is empty');
      const baseUrl = blankToUndefined(settings.openaiBaseUrl);
      if (baseUrl !== undefined) {
        let url: URL;
        try {
          url = new URL(baseUrl);
        } catch {
          throw configInvalid('the OpenAI base URL is not a valid URL');
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
          throw configInvalid('the OpenAI base URL must use http or https');
        }
        if (url.username !== '' || url.password !== '') {
          throw configInvalid('the OpenAI base URL must not contain credentials; set the API key instead');
        }
      }
      return createOpenAIProvider({
        apiKey: blankToUndefined(settings.openaiApiKey),
        baseUrl,
        model: apiModel,
        dimensions,
      });
    }
    default: {
      const unknown: never = settings.provider;
      throw configInvalid(`unknown embedding provider "${String(unknown)}"`);
    }
  }
}
