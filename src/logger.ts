import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Headers and bodies are never logged (they carry tokens and memory text), and
 * query strings are cut (OAuth redirects carry codes in them). Redaction covers the one kind of object a
 * line may carry that our code did not build field by field: an error from a library, under `err`.
 *
 * Lines go to stdout asynchronously (a write in flight collects the lines logged meanwhile, so a busy
 * server makes one system call for many lines, and a quiet one writes each line at once); pino writes
 * what is left synchronously when the process exits, on a normal shutdown as on a fatal error. Only a
 * process killed outright (SIGKILL) can lose the lines of its last write.
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
  return level === 'silent' ? pino(options) : pino(options, pino.destination({ dest: 1, sync: false }));
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
