/**
 * Imports running at once in this process: one per person, and at most `perProcess` in all. Each holds its file
 * (up to WebImportMaxBytes) and a share of the event loop and the embedder, so the number is bounded; a further
 * one is refused at once, saying why, rather than queued.
 */
export class ImportSlots {
  readonly #perProcess: number;
  readonly #running = new Set<string>();

  constructor(perProcess: number) {
    this.#perProcess = perProcess;
  }

  /** A release function for the slot taken, or why none was: the subject's own import, or the process's limit. */
  take(subject: string): (() => void) | 'subject-busy' | 'process-busy' {
    if (this.#running.has(subject)) return 'subject-busy';
    if (this.#running.size >= this.#perProcess) return 'process-busy';
    this.#running.add(subject);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running.delete(subject);
    };
  }
}
