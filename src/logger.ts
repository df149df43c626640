import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Headers and bodies are never logged (they carry tokens and memory text), and
 * query strings are cut (OAuth redirects carry codes in them). Redaction covers the one kind of object a
 * line may carry that our code did not build field by field: an error from a library, under `err`.
 *
 * Lines go to stdout asynchronously through PacedStdout (below); what is pending is written synchronously
 * when the process exits, on a normal shutdown as on a fatal error. Only a process killed outright (SIGKILL)
 * can lose lines: those of its last 10 ms.
 */
export function createLogger(level: LoggerOptions['level'] | 'silent', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: level ?? 'info',
    redact: { paths: ['err.token', 'err.password', 'err.*.token', 'err.*.password', 'err.*.authorization'], censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: pathOf(request.url),
        // The client's address; behind a reverse proxy, from X-Forwarded-For only when TrustProxy names it.
        remoteAddress: request.ip,
      }),
    },
  };
  if (destination !== undefined) return pino(options, destination);
  return level === 'silent' ? pino(options) : pino(options, new PacedStdout());
}

/** The longest a line waits before it is written, when a line was written less than this ago. */
const WRITE_INTERVAL_MS = 10;
/** Most bytes of log lines held while stdout takes none (its reader stalled): later lines are dropped, not kept. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * Stdout, written at most once every WRITE_INTERVAL_MS: a quiet server writes a line at the end of the event
 * loop's turn, a busy one makes one system call for all the lines of the last 10 ms (a call per line cost a
 * request about a fifth of its CPU).
 * sonic-boom does the writing (partial writes, EAGAIN, a stalled reader), in buffer mode: in string mode it
 * measured the whole pending text again for every line appended while a write was in flight. What is
 * pending is written synchronously when the process exits, and on `fatal` (pino calls flushSync). A reader that
 * stops reading costs at most MAX_PENDING_BYTES of memory: lines beyond that are dropped.
 */
class PacedStdout {
  readonly #stdout = pino.destination({ dest: 1, sync: false, contentMode: 'buffer', maxLength: MAX_PENDING_BYTES });
  #pending: string[] = [];
  #scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #lastWrite = Number.NEGATIVE_INFINITY;
  #lastWords: ReturnType<typeof pino.destination> | undefined;

  constructor() {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.#pending.push(line);
    if (this.#scheduled !== undefined) return;
    // Even a quiet moment's line waits for the end of the event loop's turn: the lines logged together (a
    // burst, or an error and the fatal line after it) are then written together, and flushSync finds them all.
    const wait = this.#lastWrite + WRITE_INTERVAL_MS - performance.now();
    this.#scheduled = (wait <= 0 ? setImmediate(this.#writePending) : setTimeout(this.#writePending, wait)).unref();
  }

  readonly #writePending = (): void => {
    this.#scheduled = undefined;
    this.#lastWrite = performance.now();
    if (this.#pending.length === 0) return;
    const text = this.#pending.join('');
    this.#pending = [];
    this.#stdout.write(Buffer.from(text) as unknown as string);
  };

  #cancel(): void {
    const scheduled = this.#scheduled;
    if (scheduled === undefined) return;
    this.#scheduled = undefined;
    if ('refresh' in scheduled) clearTimeout(scheduled);
    else clearImmediate(scheduled);
  }

  flush(callback?: (error?: Error) => void): void {
    this.#cancel();
    this.#writePending();
    this.#stdout.flush(callback);
  }

  /** At exit and on `fatal`: what sonic-boom holds, then what is pending here, both written before returning. */
  flushSync(): void {
    this.#cancel();
    this.#stdout.flushSync();
    if (this.#pending.length === 0) return;
    // Through a synchronous sonic-boom: handed to the asynchronous one, the lines would start a write that the
    // exit does not wait for.
    this.#lastWords ??= pino.destination({ dest: 1, sync: true });
    this.#lastWords.write(this.#pending.join(''));
    this.#pending = [];
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
