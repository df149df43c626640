/**
 * Progress of a long command on stderr: on a terminal, one line redrawn in place (a bar, the percentage and
 * the counts); otherwise (a pipe, a log file) a plain line at most every `intervalMs`, and always the last one.
 */
export interface ProgressOutput {
  update(fraction: number | undefined, detail: string): void;
  /** Draws the last state for good (a terminal's line is ended). */
  finish(): void;
}

const BAR_WIDTH = 24;

/** "[##########··············]  42%" for a fraction from 0 to 1. */
export function progressBar(fraction: number): string {
  const clamped = Math.min(1, Math.max(0, fraction));
  const filled = Math.round(clamped * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'·'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(clamped * 100)).padStart(3)}%`;
}

export function progressOutput(stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }, intervalMs = 2000, now = Date.now): ProgressOutput {
  const terminal = stream.isTTY === true;
  let last: { fraction: number | undefined; detail: string } | undefined;
  let printedAt = 0;
  let printed = false;
  const line = (fraction: number | undefined, detail: string) => {
    if (fraction === undefined) return detail;
    return terminal ? `${progressBar(fraction)}  ${detail}` : `${Math.floor(Math.min(1, fraction) * 100)}%  ${detail}`;
  };
  return {
    update(fraction, detail) {
      last = { fraction, detail };
      if (terminal) {
        // Cut to the terminal's width, so the carriage return redraws one line.
        const text = line(fraction, detail).slice(0, Math.max(20, (stream.columns ?? 80) - 1));
        stream.write(`\r${text}\u001b[K`);
        printed = true;
      } else if (now() - printedAt >= intervalMs) {
        stream.write(`${line(fraction, detail)}\n`);
        printedAt = now();
        printed = true;
        last = undefined;
      }
    },
    finish() {
      if (terminal) {
        if (printed) stream.write('\n');
      } else if (last !== undefined) {
        stream.write(`${line(last.fraction, last.detail)}\n`);
      }
    },
  };
}
