// What the *-variants benchmarks share: a variant named by comma-joined fields ("tree=/tmp/before,engine=postgres"),
// and rounds that load every variant in turn, in alternating order, so drift on the machine hits each alike.

/** A variant's fields: "tree=/tmp/before,flags=--x" → { tree: '/tmp/before', flags: '--x' }. */
export function variantFields(name: string): Record<string, string> {
  return Object.fromEntries(name.split(',').map((field) => [field.slice(0, field.indexOf('=')), field.slice(field.indexOf('=') + 1)]));
}

/** `rounds` rounds of `run(i)` for each of `count` variants, forwards then backwards; the results per variant. */
export async function alternatingRounds<T>(count: number, rounds: number, run: (i: number) => Promise<T>): Promise<T[][]> {
  const results = Array.from({ length: count }, () => [] as T[]);
  for (let round = 0; round < rounds; round++) {
    const order = [...results.keys()];
    if (round % 2 === 1) order.reverse();
    for (const i of order) results[i]!.push(await run(i));
  }
  return results;
}
