import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../src/db/open-database.js';
import { RecallCounts } from '../../src/memory/recall-counts.js';

interface Written {
  readonly caller: Principal;
  readonly counts: Record<number, number>;
}

/** A writer that records each write and, while `gate` is set, holds it until released. */
function recordingWriter() {
  const writes: Written[] = [];
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  return {
    writes,
    hold() {
      gate = new Promise((resolve) => (release = resolve));
    },
    release() {
      release?.();
      gate = undefined;
    },
    async write(caller: Principal, counts: ReadonlyMap<number, number>) {
      writes.push({ caller, counts: Object.fromEntries(counts) });
      await gate;
    },
  };
}

const alice: Principal = { subject: 'alice' };

describe('RecallCounts: recall counts written after the answer', () => {
  it('adds nothing to the caller\'s path: the write happens after add returns, and flush waits for it', async () => {
    const writer = recordingWriter();
    const counts = new RecallCounts((caller, map) => writer.write(caller, map), () => undefined);
    counts.add(alice, [1, 2]);
    expect(writer.writes).toEqual([]);
    await counts.flush();
    expect(writer.writes).toEqual([{ caller: alice, counts: { 1: 1, 2: 1 } }]);
  });

  it('counts the recalls answered within the delay together, and those answered during a write in the next, per caller and scope', async () => {
    const writer = recordingWriter();
    const counts = new RecallCounts((caller, map) => writer.write(caller, map), () => undefined, 20);
    const limited: Principal = { subject: 'alice', spaceLimit: ['team'] };
    writer.hold();
    counts.add(alice, [1]);
    counts.add(alice, [1, 3]);
    counts.add(limited, [9]);
    expect(writer.writes).toEqual([]);
    // One write for alice's two recalls; the limited token's waits behind it.
    await vi.waitFor(() => expect(writer.writes).toHaveLength(1));
    expect(writer.writes[0]).toEqual({ caller: alice, counts: { 1: 2, 3: 1 } });
    // While that write is held: another recall, counted in the next write.
    counts.add(alice, [1]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(writer.writes).toHaveLength(1);
    writer.release();
    await counts.flush();
    expect(writer.writes.slice(1)).toEqual([
      { caller: limited, counts: { 9: 1 } },
      { caller: alice, counts: { 1: 1 } },
    ]);
  });

  it('reports a failed write and goes on: the next counts are written', async () => {
    const errors: unknown[] = [];
    const written: Record<number, number>[] = [];
    let fail = true;
    const counts = new RecallCounts(
      async (_, map) => {
        if (fail) throw new Error('database down');
        written.push(Object.fromEntries(map));
      },
      (error) => errors.push(error),
    );
    counts.add(alice, [1]);
    await counts.flush();
    expect(errors.map((error) => (error as Error).message)).toEqual(['database down']);
    fail = false;
    counts.add(alice, [2]);
    await counts.flush();
    expect(written).toEqual([{ 2: 1 }]);
  });

  it('keeps at most 10,000 memories waiting and reports what it drops', async () => {
    const writer = recordingWriter();
    const errors: unknown[] = [];
    const counts = new RecallCounts((caller, map) => writer.write(caller, map), (error) => errors.push(error));
    counts.add(alice, Array.from({ length: 10_005 }, (_, index) => index + 1));
    // Counting one already waiting still works past the bound.
    counts.add(alice, [1]);
    await counts.flush();
    expect(Object.keys(writer.writes[0]!.counts)).toHaveLength(10_000);
    expect(writer.writes[0]!.counts[1]).toBe(2);
    expect(errors).toHaveLength(5);
  });
});
