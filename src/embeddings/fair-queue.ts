/**
 * Per-key queues served round-robin, for a pool of workers in which one key (a subject) may occupy at most one
 * worker at a time: whatever one subject sends, and however long its texts, the other workers stay free for the
 * others. A batch takes jobs of keys that are not running, one job per key per round, up to `maxTexts` texts and
 * `maxChars` characters (a single job larger than that goes alone), so short texts are batched together and a
 * long one does not hold short ones of other keys behind it. A worker kept for short texts takes batches without
 * such large jobs (`large: false`): a key whose next job is large waits for a worker that takes them.
 */
export interface FairJob {
  readonly key: string;
  readonly texts: readonly string[];
}

export interface FairQueueOptions {
  readonly maxTexts: number;
  readonly maxChars: number;
}

export class FairQueue<J extends FairJob> {
  readonly #options: FairQueueOptions;
  /** Keys with waiting jobs, in round-robin order; a key goes to the back when it is served. */
  readonly #keys: string[] = [];
  readonly #jobs = new Map<string, J[]>();
  #size = 0;

  constructor(options: FairQueueOptions) {
    this.#options = options;
  }

  /** Jobs waiting. */
  get size(): number {
    return this.#size;
  }

  /** Jobs of `key` waiting. */
  waiting(key: string): number {
    return this.#jobs.get(key)?.length ?? 0;
  }

  push(job: J): void {
    const queue = this.#jobs.get(job.key);
    if (queue === undefined) {
      this.#jobs.set(job.key, [job]);
      this.#keys.push(job.key);
    } else {
      queue.push(job);
    }
    this.#size += 1;
  }

  /**
   * The next batch for a free worker, skipping keys in `running` and, unless `large`, keys whose next job is
   * large (more texts or characters than a batch holds); empty when none can be taken.
   */
  take(running: ReadonlySet<string>, { large }: { readonly large: boolean } = { large: true }): J[] {
    const batch: J[] = [];
    const served = new Set<string>();
    let texts = 0;
    let chars = 0;
    const add = (key: string, job: J, jobChars: number): void => {
      this.#jobs.get(key)!.shift();
      this.#size -= 1;
      batch.push(job);
      served.add(key);
      texts += job.texts.length;
      chars += jobChars;
    };
    rounds: for (let added = true; added; ) {
      added = false;
      for (const key of this.#keys) {
        const job = running.has(key) ? undefined : this.#jobs.get(key)![0];
        if (job === undefined) continue;
        const jobChars = charsOf(job);
        if (!large && (job.texts.length > this.#options.maxTexts || jobChars > this.#options.maxChars)) continue;
        if (texts + job.texts.length <= this.#options.maxTexts && chars + jobChars <= this.#options.maxChars) {
          add(key, job, jobChars);
          added = true;
        } else if (batch.length === 0) {
          add(key, job, jobChars); // too large for any batch: it goes alone
          break rounds;
        }
      }
    }
    // Served keys go to the back of the round; keys left without jobs are dropped.
    for (const key of served) {
      this.#keys.splice(this.#keys.indexOf(key), 1);
      if (this.#jobs.get(key)!.length > 0) this.#keys.push(key);
      else this.#jobs.delete(key);
    }
    return batch;
  }

  /** Removes and returns every waiting job. */
  drain(): J[] {
    const all = this.#keys.flatMap((key) => this.#jobs.get(key)!);
    this.#keys.length = 0;
    this.#jobs.clear();
    this.#size = 0;
    return all;
  }
}

const charsOf = (job: FairJob): number => job.texts.reduce((sum, text) => sum + text.length, 0);
