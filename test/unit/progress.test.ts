import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressBar, progressOutput } from '../../src/cli/progress.js';

function stream(isTTY: boolean, columns = 80) {
  const output = Object.assign(new PassThrough(), { isTTY, columns });
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString()));
  return { output, written: () => written };
}

describe('progress on stderr', () => {
  it('draws a bar of the fraction, clamped', () => {
    expect(progressBar(0)).toBe(`[${'·'.repeat(24)}]   0%`);
    expect(progressBar(0.5)).toBe(`[${'#'.repeat(12)}${'·'.repeat(12)}]  50%`);
    expect(progressBar(1.7)).toBe(`[${'#'.repeat(24)}] 100%`);
  });

  it('on a terminal, redraws one line in place, cut to its width, and ends it', () => {
    const { output, written } = stream(true, 40);
    const progress = progressOutput(output);
    progress.update(0.25, '10 imported');
    progress.update(1, '40 imported, and a long tail that does not fit the terminal');
    progress.finish();
    const draws = written().split('\r').slice(1);
    expect(draws).toHaveLength(2);
    expect(draws[0]).toBe(`${`${progressBar(0.25)}  10 imported`.slice(0, 39)}\u001b[K`);
    expect(draws[1]!.endsWith('\u001b[K\n')).toBe(true);
    expect(draws[1]!.replace('\u001b[K\n', '')).toHaveLength(39);
  });

  it('elsewhere (a pipe, a log), prints plain lines at most every interval, and always the last state', () => {
    const { output, written } = stream(false);
    let now = 10_000;
    const progress = progressOutput(output, 2000, () => now);
    progress.update(0.1, 'a');
    now += 500;
    progress.update(0.2, 'b');
    now += 2000;
    progress.update(0.5, 'c');
    now += 100;
    progress.update(0.9, 'd');
    progress.finish();
    expect(written()).toBe('10%  a\n50%  c\n90%  d\n');
    expect(written()).not.toContain('\r');
  });
});
