import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Headers and bodies are never logged (they carry tokens and memory text), and
 * query strings are cut (OAuth redirects carry codes in them). Redaction covers what a line may carry that our
 * code did not build field by field: an error from a library, under `err`, and a library's headers object
 * (cookies, set-cookie, authorization), at every level.
 *
 * Lines go to stdout asynchronously through PacedStdout (below); what is pending is written synchronously
 * when the process exits, on a normal shutdown as on a fatal error. Only a process killed outright (SIGKILL)
 * can lose lines: those of its last 10 ms.
 */
export function createLogger(level: LoggerOptions['level'] | 'silent', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: level ?? 'info',
    redact: { paths: [...ERROR_SECRETS, ...HEADER_SECRETS], censor: '[redacted]' },
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

/**
 * A request's logger (Fastify's `request.log`), bound to its id. pino passes every binding through the redaction
 * when it makes a child, and the header paths, which match at any depth, made that a redacting copy of the id
 * for each request (2.5 µs of a tools/list's ~55, issue 40). Bindings of plain strings hold no headers, tokens or
 * passwords for those paths to find: they are written as JSON onto a binding-free child, the same text pino writes.
 */
export function requestLogger(logger: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  const entries = Object.entries(bindings);
  if (Object.keys(options).length > 0 || !entries.every(([, value]) => typeof value === 'string')) return logger.child(bindings, options);
  const child = logger.child({});
  const own = child as unknown as Record<symbol, string>;
  own[CHINDINGS] += entries.map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`).join('');
  return child;
}

/** Where a pino logger keeps its bindings as JSON text (pino.symbols: pino's interface for integrations). */
const CHINDINGS = pino.symbols.chindingsSym;

const ERROR_SECRETS = ['err.token', 'err.password', 'err.*.token', 'err.*.password', 'err.*.authorization'];
/**
 * Credentials in headers, wherever a library's line carries a headers object, up to three levels down (at trace,
 * @fastify/multipart logs its busboy options, the request's headers with its cookies among them).
 */
const HEADER_SECRETS = ['', '*.', '*.*.'].flatMap((parents) =>
  ['cookie', '["set-cookie"]', 'authorization', '["proxy-authorization"]'].map((name) => `${parents}headers${name.startsWith('[') ? '' : '.'}${name}`),
);

/** The longest a line waits before it is written, when a line was written less than this ago. */
const WRITE_INTERVAL_MS = 10;
/** Most bytes of log lines held while stdout takes none (its reader stalled): later lines are dropped, not kept. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/** Room kept for log lines between writes; a line longer than this gets a chunk of its own. */
const CHUNK_BYTES = 64 * 1024;
/** Pending bytes that are written at once, without waiting for WRITE_INTERVAL_MS: a burst holds no more here. */
const EAGER_WRITE_BYTES = 1024 * 1024;

/**
 * Stdout, written at most once every WRITE_INTERVAL_MS: a quiet server writes a line at the end of the event
 * loop's turn, a busy one makes one system call for all the lines of the last 10 ms (a call per line cost a
 * request about a fifth of its CPU).
 * A line is encoded into a byte chunk as it comes, so its string dies young: held as strings for 10 ms, a busy
 * server's lines outlived young-generation collections and were copied by each one (issue 17).
 * sonic-boom does the writing (partial writes, EAGAIN, a stalled reader), in buffer mode: in string mode it
 * measured the whole pending text again for every line appended while a write was in flight. What is
 * pending is written synchronously when the process exits, and on `fatal` (pino calls flushSync). A reader that
 * stops reading costs at most MAX_PENDING_BYTES of memory: lines beyond that are dropped.
 */
class PacedStdout {
  readonly #stdout = pino.destination({ dest: 1, sync: false, contentMode: 'buffer', maxLength: MAX_PENDING_BYTES });
  /** Where lines are encoded; the part before #chunkStart has been handed to sonic-boom and is never written again. */
  #chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  #chunkStart = 0;
  #chunkEnd = 0;
  /** Filled chunks not yet written (a burst of more than a chunk's worth within one interval). */
  #full: Buffer[] = [];
  #fullBytes = 0;
  #scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #lastWrite = Number.NEGATIVE_INFINITY;
  #lastWords: ReturnType<typeof pino.destination> | undefined;

  constructor() {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    // A UTF-16 code unit never takes more than 3 bytes of UTF-8: with that much room, the line fits whole.
    if (this.#chunkEnd + line.length * 3 > this.#chunk.length) {
      if (this.#chunkEnd > this.#chunkStart) {
        this.#full.push(this.#chunk.subarray(this.#chunkStart, this.#chunkEnd));
        this.#fullBytes += this.#chunkEnd - this.#chunkStart;
      }
      this.#chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, line.length * 3));
      this.#chunkStart = this.#chunkEnd = 0;
    }
    this.#chunkEnd += this.#chunk.write(line, this.#chunkEnd, 'utf8');
    if (this.#fullBytes + this.#chunkEnd - this.#chunkStart >= EAGER_WRITE_BYTES) {
      this.#cancel();
      this.#writePending();
      return;
    }
    if (this.#scheduled !== undefined) return;
    // Even a quiet moment's line waits for the end of the event loop's turn: the lines logged together (a
    // burst, or an error and the fatal line after it) are then written together, and flushSync finds them all.
    const wait = this.#lastWrite + WRITE_INTERVAL_MS - performance.now();
    this.#scheduled = (wait <= 0 ? setImmediate(this.#writePending) : setTimeout(this.#writePending, wait)).unref();
  }

  /** What is pending, as byte chunks; taking it empties it. */
  #takePending(): Buffer[] {
    const taken = this.#full;
    this.#full = [];
    this.#fullBytes = 0;
    if (this.#chunkEnd > this.#chunkStart) taken.push(this.#chunk.subarray(this.#chunkStart, this.#chunkEnd));
    this.#chunkStart = this.#chunkEnd;
    return taken;
  }

  readonly #writePending = (): void => {
    this.#scheduled = undefined;
    this.#lastWrite = performance.now();
    for (const bytes of this.#takePending()) this.#stdout.write(bytes as unknown as string);
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
    const pending = this.#takePending();
    if (pending.length === 0) return;
    // Through a synchronous sonic-boom: handed to the asynchronous one, the lines would start a write that the
    // exit does not wait for.
    this.#lastWords ??= pino.destination({ dest: 1, sync: true });
    this.#lastWords.write(Buffer.concat(pending).toString('utf8'));
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
