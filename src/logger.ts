import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Headers and bodies are never logged (they carry tokens and memory text), and
 * query strings are cut (OAuth redirects carry codes in them).
 */
export function createLogger(level: LoggerOptions['level'] | 'silent'): Logger {
  return pino({
    level: level ?? 'info',
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', '*.password'], censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; id: string }) => ({
        method: request.method,
        url: request.url.split('?')[0],
        id: request.id,
      }),
    },
  });
}
