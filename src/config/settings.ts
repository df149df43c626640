import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The settings table: one row per `application.ini` key, with its environment override and rule.
 * Values arrive as strings (INI and environment alike) and are coerced here.
 */
const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value));

const url = z
  .string()
  .trim()
  .refine((value) => /^https?:\/\//.test(value) && URL.canParse(value), { message: 'must be an http(s) URL', abort: true })
  // Printed in challenges, metadata and logs: a password there would be published.
  .refine((value) => new URL(value).username === '' && new URL(value).password === '', 'must not contain a user name or password')
  .transform((value) => value.replace(/\/+$/, ''));

/** Empty means unset; anything else must pass `schema` (whose own message then names the problem). */
const blankOr = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), schema.optional());

const optionalUrl = blankOr(url);

const integer = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const absolutePath = z
  .string()
  .trim()
  .refine((value) => value.startsWith('/'), 'must be an absolute path');

/** An IPv4/IPv6 address, optionally with a /prefix, or a named range (what Fastify's trustProxy accepts). */
function isAddressOrCidr(value: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(value)) return true;
  const [address = '', prefix, ...rest] = value.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

/** A DNS name or an IP address, as a URL's host would carry it (no scheme, port or path). */
function isHostName(value: string): boolean {
  if (isIP(value.replace(/^\[|\]$/g, '')) !== 0) return true;
  return value.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i.test(value);
}

const list = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item !== ''));

export const settings = {
  BaseUrl: { env: 'MEMORY_SERVICE_BASE_URL', schema: url },
  Host: { env: 'MEMORY_SERVICE_HOST', schema: z.string().trim().min(1, 'must not be empty') },
  Port: { env: 'MEMORY_SERVICE_PORT', schema: integer(0, 65535) },
  DatabaseUrl: {
    env: 'MEMORY_SERVICE_DATABASE_URL',
    schema: blankOr(
      z.string().trim().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').refine((value) => URL.canParse(value), 'is not a valid URL'),
    ),
  },
  DatabaseSchema: {
    env: 'MEMORY_SERVICE_DATABASE_SCHEMA',
    schema: z.string().trim().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase SQL identifier'),
  },
  DatabaseConnectTimeoutMs: { env: 'MEMORY_SERVICE_DATABASE_CONNECT_TIMEOUT_MS', schema: integer(100, 600_000) },
  DatabaseStatementTimeoutMs: { env: 'MEMORY_SERVICE_DATABASE_STATEMENT_TIMEOUT_MS', schema: integer(0, 3_600_000) },
  DataDir: { env: 'MEMORY_SERVICE_DATA_DIR', schema: absolutePath },
  EmbeddingProvider: { env: 'MEMORY_SERVICE_EMBEDDING_PROVIDER', schema: z.enum(['local', 'openai']) },
  EmbeddingModel: { env: 'MEMORY_SERVICE_EMBEDDING_MODEL', schema: optionalString },
  EmbeddingDimensions: {
    env: 'MEMORY_SERVICE_EMBEDDING_DIMENSIONS',
    schema: blankOr(integer(1, 16000)),
  },
  OpenAIBaseUrl: { env: 'MEMORY_SERVICE_OPENAI_BASE_URL', schema: optionalUrl },
  EmbeddingTimeoutMs: { env: 'MEMORY_SERVICE_EMBEDDING_TIMEOUT_MS', schema: integer(100, 600_000) },
  EmbeddingConcurrency: { env: 'MEMORY_SERVICE_EMBEDDING_CONCURRENCY', schema: integer(1, 1_000) },
  EmbeddingQueueLimit: { env: 'MEMORY_SERVICE_EMBEDDING_QUEUE_LIMIT', schema: integer(0, 100_000) },
  LocalModelWorkers: { env: 'MEMORY_SERVICE_LOCAL_MODEL_WORKERS', schema: blankOr(integer(1, 64)) },
  MaxTextChars: { env: 'MEMORY_SERVICE_MAX_TEXT_CHARS', schema: integer(1, 1_000_000) },
  MaxMemoriesPerSubject: { env: 'MEMORY_SERVICE_MAX_MEMORIES_PER_SUBJECT', schema: integer(0, 1_000_000_000) },
  MaxBytesPerSubject: { env: 'MEMORY_SERVICE_MAX_BYTES_PER_SUBJECT', schema: integer(0, 1024 * 1024 * 1024 * 1024) },
  NearDuplicateThreshold: {
    env: 'MEMORY_SERVICE_NEAR_DUPLICATE_THRESHOLD',
    schema: z.coerce.number({ error: 'must be a number' }).gt(0, 'must be above 0').max(1, 'must be at most 1'),
  },
  OAuthAuthorizationServer: { env: 'MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER', schema: optionalUrl },
  OAuthAsIniFile: { env: 'MEMORY_SERVICE_OAUTH_AS_INI_FILE', schema: absolutePath },
  OAuthAudience: { env: 'MEMORY_SERVICE_OAUTH_AUDIENCE', schema: optionalString },
  OAuthClientMetadataAllowedHosts: {
    env: 'MEMORY_SERVICE_OAUTH_CLIENT_METADATA_ALLOWED_HOSTS',
    schema: list.pipe(z.array(z.string().toLowerCase().refine(isHostName, 'must list host names or IP addresses (no scheme, port or path)'))),
  },
  OAuthSubjectClaim: { env: 'MEMORY_SERVICE_OAUTH_SUBJECT_CLAIM', schema: z.string().trim().min(1, 'must not be empty') },
  OAuthMembershipClaim: { env: 'MEMORY_SERVICE_OAUTH_MEMBERSHIP_CLAIM', schema: optionalString },
  AllowedOrigins: { env: 'MEMORY_SERVICE_ALLOWED_ORIGINS', schema: list },
  MaxBodyBytes: { env: 'MEMORY_SERVICE_MAX_BODY_BYTES', schema: integer(1024, 64 * 1024 * 1024) },
  LogLevel: {
    env: 'MEMORY_SERVICE_LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  },
  RateLimitPerMinute: { env: 'MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE', schema: integer(0, 1_000_000) },
  TrustProxy: {
    env: 'MEMORY_SERVICE_TRUST_PROXY',
    schema: list.pipe(z.array(z.string().refine(isAddressOrCidr, 'must list IP addresses, CIDR ranges or loopback/linklocal/uniquelocal'))),
  },
  WebClientId: { env: 'MEMORY_SERVICE_WEB_CLIENT_ID', schema: optionalString },
  WebImportMaxBytes: { env: 'MEMORY_SERVICE_WEB_IMPORT_MAX_BYTES', schema: integer(1024, 1024 * 1024 * 1024) },
  MetricsHost: { env: 'MEMORY_SERVICE_METRICS_HOST', schema: z.string().trim().min(1, 'must not be empty') },
  MetricsPort: {
    env: 'MEMORY_SERVICE_METRICS_PORT',
    schema: blankOr(integer(1, 65535)),
  },
} as const;

export type SettingName = keyof typeof settings;
export type SettingValues = { [K in SettingName]: z.output<(typeof settings)[K]['schema']> };
export const settingNames = Object.keys(settings) as SettingName[];
