import type { EmbeddingProvider } from '../../src/embeddings/provider.js';

/** A unit vector of 3 dimensions that differs from text to text, so a test can tell which text a vector is for. */
export function vectorOfText(text: string): number[] {
  const values = [text.length, text.charCodeAt(text.length - 2) % 17, 1];
  const length = Math.hypot(...values);
  return values.map((value) => value / length);
}

/**
 * An embedder (3 dimensions, vectorOfText) that holds each call until `together` calls are in flight (or 1 s
 * passes), and records the keys and texts it was given and the most calls it held at once. A text in `failOn`
 * makes its call fail.
 */
export function gatedEmbedder(model: string, together: number, failOn: ReadonlySet<string> = new Set()) {
  const seen = { keys: new Set<string>(), texts: [] as string[], mostAtOnce: 0 };
  let inFlight = 0;
  let waiting: (() => void)[] = [];
  const embedder: EmbeddingProvider = {
    model,
    dimensions: 3,
    async embed(texts, options = {}) {
      seen.keys.add(options.key ?? '');
      seen.texts.push(...texts);
      inFlight += 1;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, inFlight);
      if (inFlight >= together) {
        for (const release of waiting) release();
        waiting = [];
      } else {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 1_000);
        });
      }
      inFlight -= 1;
      if (texts.some((text) => failOn.has(text))) throw new Error('the model failed');
      return texts.map(vectorOfText);
    },
    ready: async () => {},
    close: async () => {},
  };
  return { embedder, seen };
}
