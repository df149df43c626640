import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Headers and bodies are never logged (they carry tokens and memory text), and
 * query strings are cut (OAuth redirects carry codes in them).
 */
export function createLogger(level: LoggerOptions['level'] | 'silent', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: level ?? 'info',
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', '*.password'], censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; id: string; ip?: string }) => ({
        method: request.method,
        url: request.url.split('?')[0],
        id: request.id,
        // The client's address; behind a reverse proxy, from X-Forwarded-For only when TrustProxy names it.
        remoteAddress: request.ip,
      }),
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
