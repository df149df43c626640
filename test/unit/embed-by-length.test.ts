import { describe, expect, it } from 'vitest';
import { embedByLength } from '../../src/embeddings/local-model.js';

/** A text's stand-in vector: [its length, the sum of its character codes]. */
const vectorOf = (text: string): number[] => [text.length, [...text].reduce((sum, char) => sum + char.charCodeAt(0), 0)];

/** A stand-in for the model: records each call's texts and answers each text with vectorOf. */
function recordingModel() {
  const calls: string[][] = [];
  const embed = async (texts: string[]): Promise<number[][]> => {
    calls.push(texts);
    return texts.map(vectorOf);
  };
  return { calls, embed };
}

describe('embedByLength (the local model is called with texts of similar length)', () => {
  const whole =
    'Caroline: Hey Mel! Good to see you! How have you been? I went to a LGBTQ support group yesterday and it was so powerful. I met so many people who shared their stories with me.';
  const sentences = ['Caroline: Hey Mel!', 'Caroline: Good to see you!', 'Caroline: How have you been?', 'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.'];

  it("answers every text with its own vector, in the texts' order", async () => {
    const { embed } = recordingModel();
    const texts = [whole, ...sentences, 'x', whole.repeat(3), ''];
    expect(await embedByLength(embed, texts)).toEqual(texts.map(vectorOf));
  });

  it('never calls the model with a text more than 1.5 times as long as the shortest of its call (or than 48 characters)', async () => {
    const { calls, embed } = recordingModel();
    const texts = Array.from({ length: 60 }, (_, i) => 'word '.repeat((i * 7) % 41) + `text ${i}`);
    await embedByLength(embed, texts);
    expect(calls.flat()).toHaveLength(60);
    for (const call of calls) {
      const lengths = call.map((text) => text.length);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(Math.max(48, Math.min(...lengths)) * 1.5);
    }
  });

  it("embeds a memory's whole text apart from its short sentences, and texts of similar length in one call", async () => {
    const { calls, embed } = recordingModel();
    await embedByLength(embed, [whole, ...sentences]);
    expect(calls.find((call) => call.includes(whole))).toEqual([whole]);
    expect(calls.find((call) => call.includes(sentences[0]!))).toEqual(expect.arrayContaining(sentences.slice(0, 3)));

    const similar = Array.from({ length: 10 }, (_, i) => `The user owns ${i + 1} houseplants in room number ${i}`);
    const before = calls.length;
    await embedByLength(embed, similar);
    expect(calls.length - before).toBe(1);
  });

  it('makes no call for no texts', async () => {
    const { calls, embed } = recordingModel();
    expect(await embedByLength(embed, [])).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});
