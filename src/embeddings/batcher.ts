/**
 * A small generic micro-batcher.
 *
 * Callers `submit` arrays of items; items submitted within the same macrotask window are
 * coalesced into one call of `run` holding up to `maxBatchSize` items. A batch is flushed
 * on `setImmediate` after the first item is queued, or at once when `maxBatchSize` items are
 * waiting. A request larger than `maxBatchSize` is spread over consecutive batches.
 * Results are split back to each caller in submission order.
 *
 * If `run` throws (or returns the wrong number of results), every caller with an item in
 * that batch is rejected with the error; items of a rejected caller still waiting in the
 * queue are dropped.
 */

export interface MicroBatcherOptions<I, O> {
  /** Processes one batch; must return exactly one output per input, in order. */
  run(items: I[]): Promise<O[]>;
  /** Most items passed to one `run` call. */
  maxBatchSize: number;
  /** How many `run` calls may be in flight at once (default 1). */
  concurrency?: number;
}

export interface MicroBatcher<I, O> {
  /** Resolves to one output per item, in order. An empty array resolves to []. */
  submit(items: readonly I[]): Promise<O[]>;
  /** Resolves once everything already submitted has settled. */
  drain(): Promise<void>;
  /** Items waiting for a batch (not counting batches in flight). */
  readonly queued: number;
}

interface Request<I, O> {
  readonly items: readonly I[];
  readonly results: O[];
  /** Index of the next item of this request not yet put into a batch. */
  next: number;
  /** Items not yet answered. */
  remaining: number;
  failed: boolean;
  resolve(value: O[]): void;
  reject(reason: unknown): void;
}

interface Segment<I, O> {
  readonly request: Request<I, O>;
  readonly start: number;
  readonly length: number;
}

export function createMicroBatcher<I, O>(options: MicroBatcherOptions<I, O>): MicroBatcher<I, O> {
  const maxBatchSize = options.maxBatchSize;
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) {
    throw new RangeError(`maxBatchSize must be a positive integer, got ${String(maxBatchSize)}`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  }

  const queue: Request<I, O>[] = [];
  let queuedItems = 0;
  let running = 0;
  let scheduled = false;
  let idleWaiters: (() => void)[] = [];

  const settleIdle = (): void => {
    if (queue.length === 0 && running === 0 && !scheduled) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const takeBatch = (): Segment<I, O>[] => {
    const segments: Segment<I, O>[] = [];
    let size = 0;
    while (size < maxBatchSize && queue.length > 0) {
      const request = queue[0]!;
      if (request.failed) {
        queue.shift();
        queuedItems -= request.items.length - request.next;
        continue;
      }
      const length = Math.min(maxBatchSize - size, request.items.length - request.next);
      segments.push({ request, start: request.next, length });
      request.next += length;
      size += length;
      queuedItems -= length;
      if (request.next === request.items.length) queue.shift();
    }
    return segments;
  };

  const fail = (segments: readonly Segment<I, O>[], error: unknown): void => {
    for (const { request } of segments) {
      if (!request.failed) {
        request.failed = true;
        request.reject(error);
      }
    }
  };

  const runBatch = async (segments: Segment<I, O>[]): Promise<void> => {
    const items: I[] = [];
    for (const s of segments) {
      for (let i = s.start; i < s.start + s.length; i++) items.push(s.request.items[i]!);
    }
    let outputs: O[];
    try {
      outputs = await options.run(items);
    } catch (error) {
      fail(segments, error);
      return;
    }
    if (!Array.isArray(outputs) || outputs.length !== items.length) {
      const got = Array.isArray(outputs) ? outputs.length : typeof outputs;
      fail(segments, new Error(`batch returned ${String(got)} results for ${items.length} items`));
      return;
    }
    let offset = 0;
    for (const s of segments) {
      const { request } = s;
      for (let i = 0; i < s.length; i++) request.results[s.start + i] = outputs[offset + i]!;
      offset += s.length;
      if (request.failed) continue;
      request.remaining -= s.length;
      if (request.remaining === 0) request.resolve(request.results);
    }
  };

  /** Starts batches while there is capacity; with `onlyFull`, only batches of `maxBatchSize`. */
  const pump = (onlyFull: boolean): void => {
    while (running < concurrency && queuedItems > 0 && (!onlyFull || queuedItems >= maxBatchSize)) {
      const segments = takeBatch();
      if (segments.length === 0) break;
      running++;
      void runBatch(segments).finally(() => {
        running--;
        // Whatever queued while this batch ran has had its window: go now.
        pump(false);
        settleIdle();
      });
    }
    // At capacity, the next batch to finish pumps again; no need to poll.
    if (queuedItems > 0 && running < concurrency) schedule();
  };

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump(false);
      settleIdle();
    });
  }

  return {
    submit(items: readonly I[]): Promise<O[]> {
      if (items.length === 0) return Promise.resolve([]);
      return new Promise<O[]>((resolve, reject) => {
        queue.push({
          items: items.slice(),
          results: new Array<O>(items.length),
          next: 0,
          remaining: items.length,
          failed: false,
          resolve,
          reject,
        });
        queuedItems += items.length;
        pump(true);
      });
    },
    drain(): Promise<void> {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },
    get queued(): number {
      return queuedItems;
    },
  };
}
