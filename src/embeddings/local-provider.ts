import type { Worker } from 'node:worker_threads';
import { embeddingError, isServiceError } from '../errors.js';
import { siblingModule, startWorker } from '../worker-thread.js';
import { FairQueue } from './fair-queue.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from './local-model.js';
import type { WorkerReply, WorkerRequest, WorkerSettings } from './local-worker.js';
import type { EmbedOptions, EmbeddingProvider } from './provider.js';
import { normaliseVector } from './vector.js';

export { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from './local-model.js';

const SOURCE = 'local embedding model';
/** The key of callers that name none (maintenance such as reembed): they share one queue. */
const SHARED_KEY = '';
/**
 * How far a bulk worker lowers its CPU priority (nice 0 -> 10: about a tenth of the CPU share of a normal
 * thread when both want the same core), so the event loop and the short texts' workers, which serve everyone,
 * win the CPU over one subject's long texts, yet it still takes whatever CPU nobody else wants.
 */
const BULK_NICE_INCREMENT = 10;

const sibling = (name: string): URL => siblingModule(name, import.meta.url);

export interface LocalProviderOptions {
  /**
   * Worker threads, each with its own copy of the model (default 1). With two or more, half of them (rounded
   * down) are bulk workers: at a lower CPU priority, they take the large jobs (long texts, big batches) that the
   * others never do; the others take short texts first.
   */
  readonly workers?: number;
  /**
   * Every worker a bulk worker (default false): for maintenance such as `reembed`, which has no queries to keep
   * moving and whose large batches should use every worker, at the lowered priority that leaves a server running
   * beside it the CPU it wants.
   */
  readonly bulkOnly?: boolean;
  /** URL of the module whose `loadModel()` each worker calls (default: local-model; tests pass stand-ins). */
  readonly modelModule?: string;
  /** Most texts in one model call (default 32). */
  readonly maxBatchTexts?: number;
  /** Most characters in one model call, unless a single text is longer (default 2,000). */
  readonly maxBatchChars?: number;
  /** Most embed() calls one key may have waiting; past it they fail at once (default 256). */
  readonly maxWaitingPerKey?: number;
  /** Told once if a bulk worker could not lower its priority (not Linux, no /proc): it then runs at normal priority. */
  readonly onDebug?: (message: string) => void;
}

/** 'short' workers take only batches of short texts; 'bulk' workers, at lower priority, take anything. */
export type WorkerRole = 'short' | 'bulk';

export interface LocalProviderStats {
  /** Model invocations so far. */
  batches: number;
  /** Texts embedded by those invocations. */
  texts: number;
  /** Workers replaced after they died. */
  restarts: number;
  /** Each loaded worker's role and thread id (undefined where the system does not say). */
  workers: { role: WorkerRole; thread: number | undefined }[];
}

export interface LocalEmbeddingProvider extends EmbeddingProvider {
  stats(): LocalProviderStats;
}

interface Job {
  readonly key: string;
  readonly texts: readonly string[];
  resolve(vectors: number[][]): void;
  reject(error: unknown): void;
}

interface Slot {
  readonly worker: Worker;
  readonly role: WorkerRole;
  thread: number | undefined;
  state: 'loading' | 'idle' | 'busy';
  batch: { readonly id: number; readonly jobs: readonly Job[] } | undefined;
}

/**
 * The local model, run off the event loop: `workers` worker threads each load the model once and embed one batch
 * at a time, so a long text (0.4–0.8 s for 16,000 characters) no longer stalls every other request, and on
 * several cores they embed in parallel. Callers name a fairness key (the subject); a FairQueue serves keys
 * round-robin and lets one key occupy at most one worker, so one subject's long texts cannot take every worker.
 * Large jobs run only on bulk workers, whose lowered CPU priority keeps one subject's long texts from taking a
 * core from the event loop and the short texts of everyone else (see `workers`).
 * A worker that dies is replaced; the texts it held fail with EMBEDDING_ERROR. `ready()` resolves once every
 * worker has loaded the model; `close()` lets running batches finish and ends the workers.
 */
export function createLocalProvider(options: LocalProviderOptions = {}): LocalEmbeddingProvider {
  const size = Math.max(1, options.workers ?? 1);
  // Slots are in this order: short workers first, so that short texts go to them before a bulk worker.
  const bulkWorkers = options.bulkOnly === true ? size : size > 1 ? Math.floor(size / 2) : 0;
  const roles: WorkerRole[] = Array.from({ length: size }, (_, index) => (index >= size - bulkWorkers ? 'bulk' : 'short'));
  // With one worker there is no other to keep short texts moving: it takes everything, at normal priority.
  const takesLarge = (role: WorkerRole): boolean => role === 'bulk' || size === 1;
  let toldPriority = false;
  const modelModule = options.modelModule ?? sibling('local-model').href;
  const maxWaitingPerKey = options.maxWaitingPerKey ?? 256;
  const queue = new FairQueue<Job>({ maxTexts: options.maxBatchTexts ?? 32, maxChars: options.maxBatchChars ?? 2_000 });
  const running = new Set<string>();
  const stats = { batches: 0, texts: 0, restarts: 0 };
  let slots: Slot[] = [];
  let loading: Promise<void> | undefined;
  let nextBatchId = 0;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const spawn = (role: WorkerRole): { slot: Slot; loaded: Promise<void> } => {
    const entry = sibling('local-worker');
    const workerData: WorkerSettings = { modelModule, niceIncrement: role === 'bulk' ? BULK_NICE_INCREMENT : 0 };
    const worker = startWorker(entry, workerData);
    const slot: Slot = { worker, role, thread: undefined, state: 'loading', batch: undefined };
    const loaded = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          slot.thread = reply.thread;
          if (role === 'bulk' && reply.problem !== undefined && !toldPriority) {
            toldPriority = true;
            options.onDebug?.(`bulk embedding runs at normal CPU priority: could not lower a worker thread's (${reply.problem})`);
          }
          slot.state = 'idle';
          resolve();
          pump();
        } else if (reply.type === 'failed') {
          reject(embeddingError(`could not load the ${SOURCE}: ${reply.message}`));
        } else {
          finish(slot, reply);
        }
      });
      worker.on('error', (error) => reject(embeddingError(`could not load the ${SOURCE}: ${error.message}`)));
      worker.on('exit', (code) => {
        reject(embeddingError(`could not load the ${SOURCE}: its worker exited (code ${code})`));
        died(slot, code);
      });
    });
    return { slot, loaded };
  };

  /** A worker ended: what it held fails, and (while in service) a new one takes its place. */
  const died = (slot: Slot, code: number): void => {
    const index = slots.indexOf(slot);
    if (index === -1) return;
    const batch = slot.batch;
    slot.batch = undefined;
    if (batch !== undefined) {
      for (const job of batch.jobs) running.delete(job.key);
      const error = embeddingError(`the ${SOURCE} stopped while embedding (worker exit code ${code}); try again`);
      for (const job of batch.jobs) job.reject(error);
    }
    if (closed || slot.state === 'loading') {
      slots.splice(index, 1);
      if (slots.length === 0 && !closed) {
        // Nothing left to run the queue: fail it, and let the next call start afresh.
        loading = undefined;
        for (const job of queue.drain()) job.reject(embeddingError(`the ${SOURCE} could not be restarted (worker exit code ${code})`));
      }
    } else {
      stats.restarts += 1;
      const replacement = spawn(slot.role);
      slots[index] = replacement.slot;
      replacement.loaded.catch(() => undefined);
    }
    settleIdle();
    pump();
  };

  const finish = (slot: Slot, reply: Extract<WorkerReply, { id: number }>): void => {
    const batch = slot.batch;
    if (batch === undefined || batch.id !== reply.id) return;
    slot.batch = undefined;
    slot.state = 'idle';
    for (const job of batch.jobs) running.delete(job.key);
    const total = batch.jobs.reduce((sum, job) => sum + job.texts.length, 0);
    if (reply.type === 'error') {
      const error = embeddingError(`${SOURCE} failed: ${reply.message}`);
      for (const job of batch.jobs) job.reject(error);
    } else if (!Array.isArray(reply.vectors) || reply.vectors.length !== total) {
      const got = Array.isArray(reply.vectors) ? reply.vectors.length : 0;
      const error = embeddingError(`${SOURCE} returned ${got} vectors for ${total} texts`);
      for (const job of batch.jobs) job.reject(error);
    } else {
      let offset = 0;
      for (const job of batch.jobs) {
        const raw = (reply.vectors as unknown[]).slice(offset, offset + job.texts.length);
        offset += job.texts.length;
        try {
          job.resolve(raw.map((vector) => normaliseVector(vector, LOCAL_MODEL_DIMENSIONS, SOURCE)));
        } catch (error) {
          job.reject(error);
        }
      }
    }
    settleIdle();
    pump();
  };

  /** Gives every idle worker a batch, fairly. */
  const pump = (): void => {
    for (const slot of slots) {
      if (slot.state !== 'idle' || queue.size === 0) continue;
      const jobs = queue.take(running, { large: takesLarge(slot.role) });
      if (jobs.length === 0) continue;
      for (const job of jobs) running.add(job.key);
      const id = ++nextBatchId;
      const texts = jobs.flatMap((job) => job.texts);
      slot.state = 'busy';
      slot.batch = { id, jobs };
      stats.batches += 1;
      stats.texts += texts.length;
      slot.worker.postMessage({ id, texts } satisfies WorkerRequest);
    }
  };

  const settleIdle = (): void => {
    if (slots.some((slot) => slot.batch !== undefined)) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const waiter of waiters) waiter();
  };

  /** Starts the workers (once; again after a failed start) and resolves when every one has loaded the model. */
  const start = (): Promise<void> => {
    loading ??= (async () => {
      const started = roles.map(spawn);
      slots = started.map(({ slot }) => slot);
      try {
        await Promise.all(started.map(({ loaded }) => loaded));
      } catch (error) {
        // A later call tries again from scratch.
        const failed = slots;
        slots = [];
        loading = undefined;
        await Promise.all(failed.map((slot) => slot.worker.terminate()));
        for (const job of queue.drain()) job.reject(error);
        throw error;
      }
    })();
    return loading;
  };

  return {
    model: LOCAL_MODEL_NAME,
    dimensions: LOCAL_MODEL_DIMENSIONS,

    async embed(texts: readonly string[], embedOptions: EmbedOptions = {}): Promise<number[][]> {
      if (closed) throw embeddingError('embedding provider is closed');
      if (texts.length === 0) return [];
      if (texts.some((text) => typeof text !== 'string')) throw embeddingError('embed() expects strings');
      const key = embedOptions.key ?? SHARED_KEY;
      if (queue.waiting(key) >= maxWaitingPerKey) {
        throw embeddingError(`the ${SOURCE} is busy with ${maxWaitingPerKey} earlier requests of the same caller; try again shortly`);
      }
      const vectors = new Promise<number[][]>((resolve, reject) => {
        queue.push({ key, texts: [...texts], resolve, reject });
      });
      try {
        await start();
      } catch (error) {
        await vectors.catch(() => undefined);
        throw isServiceError(error) ? error : embeddingError(`${SOURCE} failed: ${String(error)}`);
      }
      pump();
      return vectors;
    },

    async ready(): Promise<void> {
      if (closed) throw embeddingError('embedding provider is closed');
      await start();
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const job of queue.drain()) job.reject(embeddingError('embedding provider is closed'));
      // Closed while the model loads (a start that failed elsewhere): the load is not waited for.
      await Promise.all(slots.filter((slot) => slot.state === 'loading').map((slot) => slot.worker.terminate()));
      await loading?.catch(() => undefined);
      await new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
      const ending = slots;
      slots = [];
      await Promise.all(ending.map((slot) => slot.worker.terminate()));
    },

    stats(): LocalProviderStats {
      return { ...stats, workers: slots.filter((slot) => slot.state !== 'loading').map(({ role, thread }) => ({ role, thread })) };
    },
  };
}
