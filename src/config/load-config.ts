import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse as parseIni } from 'ini';
import type { EmbeddingSettings } from '../embeddings/create-provider.js';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../embeddings/local-provider.js';
import { DEFAULT_EMBEDDING_CONCURRENCY, DEFAULT_EMBEDDING_QUEUE_LIMIT, DEFAULT_EMBEDDING_TIMEOUT_MS, DEFAULT_OPENAI_MODEL } from '../embeddings/openai-provider.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from '../db/timeouts.js';
import { DEFAULT_MAX_BYTES_PER_SUBJECT, DEFAULT_MAX_MEMORIES_PER_SUBJECT } from '../memory/quota.js';
import { redactCredentials } from './redact.js';
import { settingNames, settings, type SettingName, type SettingValues } from './settings.js';

export interface Config {
  /** The file the settings came from, if any. */
  readonly configFile: string | undefined;
  readonly baseUrl: string;
  /** `<BaseUrl>/mcp`: the protected resource and the default token audience. */
  readonly resourceUrl: string;
  readonly host: string;
  readonly port: number;
  readonly database: {
    readonly url: string | undefined;
    readonly schema: string;
    readonly dataDir: string;
    /** PostgreSQL: longest wait for a connection. */
    readonly connectTimeoutMs: number;
    /** PostgreSQL: longest statement of a request (0: none). */
    readonly statementTimeoutMs: number;
  };
  readonly dataDir: string;
  /** Checked here (the local model's name and dimension, the server URL), so the providers trust it. */
  readonly embedding: EmbeddingSettings;
  readonly memory: {
    readonly maxTextChars: number;
    readonly nearDuplicateThreshold: number;
    /** MaxMemoriesPerSubject, MaxBytesPerSubject (UTF-8 bytes of the memories' texts); 0 is no limit. */
    readonly quota: { readonly memories: number; readonly textBytes: number };
  };
  readonly oauth: {
    /** Undefined when a configuration file does not set it: /mcp then answers 500. */
    readonly authorizationServer: string | undefined;
    /** True when the issuer is this service itself (the built-in authorization server). */
    readonly builtIn: boolean;
    readonly asIniFile: string;
    readonly audience: string;
    readonly subjectClaim: string;
    /** The claim whose values name groups a space can be shared with (e.g. groups); undefined: none. */
    readonly membershipClaim: string | undefined;
    /** Hosts whose client metadata documents may be fetched though they resolve to non-public addresses. */
    readonly clientMetadataAllowedHosts: readonly string[];
  };
  readonly http: {
    readonly allowedOrigins: readonly string[];
    readonly maxBodyBytes: number;
    /** Requests per minute per subject on /mcp; 0 = no limit. */
    readonly rateLimitPerMinute: number;
    /** Addresses/CIDRs whose X-Forwarded-* headers are believed; empty = none. */
    readonly trustProxy: readonly string[];
  };
  readonly metrics: {
    /** Bearer token for /metrics on the main listener; only ever from the environment. Unset: no /metrics there. */
    readonly token: string | undefined;
    /** A separate, unauthenticated listener for /metrics (for a private network); undefined = none. */
    readonly host: string;
    readonly port: number | undefined;
  };
  readonly web: {
    /** The page's client at an external authorization server (WebClientId); undefined with the built-in one. */
    readonly clientId: string | undefined;
    /** Its secret; only ever from the environment (MEMORY_SERVICE_WEB_CLIENT_SECRET). */
    readonly clientSecret: string | undefined;
    /** The largest file the page imports. */
    readonly importMaxBytes: number;
  };
  readonly logLevel: SettingValues['LogLevel'];
}

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], source: string) {
    super(`Invalid configuration (${source}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** From `--config FILE`. */
  readonly configFile?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The installed application's directory; the OAuth state file must live outside it. */
  readonly appRoot?: string | undefined;
}

/** Where the settings file is: `--config`, else MEMORY_SERVICE_CONFIG, else ./application.ini if present. */
export function locateConfigFile(options: LoadConfigOptions): string | undefined {
  const explicit = options.configFile ?? nonEmpty(options.env.MEMORY_SERVICE_CONFIG);
  if (explicit !== undefined) return resolve(options.cwd, explicit);
  const local = join(options.cwd, 'application.ini');
  return existsSync(local) ? local : undefined;
}

export function loadConfig(options: LoadConfigOptions): Config {
  const configFile = locateConfigFile(options);
  const problems: string[] = [];
  const fileValues = configFile === undefined ? {} : readSettingsFile(configFile, problems);

  const raw = (name: SettingName): string | undefined =>
    options.env[settings[name].env] ?? fileValues[name];

  const defaults = embeddedDefaults(options.env);
  const values: Partial<SettingValues> = {};
  const parse = <K extends SettingName>(name: K, fallback: string | undefined): void => {
    const input = raw(name) ?? fallback;
    if (input === undefined) return;
    const result = settings[name].schema.safeParse(input);
    if (result.success) values[name] = result.data as SettingValues[K];
    else problems.push(`${name}: ${result.error.issues.map((issue) => issue.message).join('; ')} (got ${JSON.stringify(redactCredentials(input))})`);
  };

  parse('Host', '127.0.0.1');
  parse('Port', '8787');
  const host = values.Host ?? '127.0.0.1';
  const publicHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  parse('BaseUrl', `http://${publicHost.includes(':') ? `[${publicHost}]` : publicHost}:${values.Port ?? 8787}`);
  parse('DatabaseUrl', '');
  parse('DatabaseSchema', 'public');
  parse('DatabaseConnectTimeoutMs', String(DEFAULT_CONNECT_TIMEOUT_MS));
  parse('DatabaseStatementTimeoutMs', String(DEFAULT_STATEMENT_TIMEOUT_MS));
  parse('DataDir', defaults.dataDir);
  parse('EmbeddingProvider', 'local');
  parse('EmbeddingModel', '');
  parse('EmbeddingDimensions', '');
  parse('OpenAIBaseUrl', '');
  parse('EmbeddingTimeoutMs', String(DEFAULT_EMBEDDING_TIMEOUT_MS));
  parse('EmbeddingConcurrency', String(DEFAULT_EMBEDDING_CONCURRENCY));
  parse('EmbeddingQueueLimit', String(DEFAULT_EMBEDDING_QUEUE_LIMIT));
  parse('LocalModelWorkers', '');
  parse('MaxTextChars', '16000');
  parse('MaxMemoriesPerSubject', String(DEFAULT_MAX_MEMORIES_PER_SUBJECT));
  parse('MaxBytesPerSubject', String(DEFAULT_MAX_BYTES_PER_SUBJECT));
  parse('NearDuplicateThreshold', '0.85');
  // With no file the built-in authorization server is the default; a file is the operator's whole auth setup.
  parse('OAuthAuthorizationServer', configFile === undefined ? values.BaseUrl : '');
  parse('OAuthAsIniFile', values.DataDir === undefined ? undefined : join(values.DataDir, 'oauth-as.ini'));
  parse('OAuthAudience', '');
  parse('OAuthSubjectClaim', 'sub');
  parse('OAuthMembershipClaim', '');
  parse('OAuthClientMetadataAllowedHosts', '');
  parse('AllowedOrigins', '');
  parse('MaxBodyBytes', String(1024 * 1024));
  parse('LogLevel', 'info');
  parse('RateLimitPerMinute', '600');
  parse('TrustProxy', '');
  parse('WebClientId', '');
  parse('WebImportMaxBytes', String(10 * 1024 * 1024));
  parse('MetricsHost', '127.0.0.1');
  parse('MetricsPort', '');

  const asIniFile = values.OAuthAsIniFile;
  if (asIniFile !== undefined && options.appRoot !== undefined && isInside(asIniFile, options.appRoot)) {
    problems.push(
      `OAuthAsIniFile: must be outside the application tree (${options.appRoot}), or a redeploy would erase it (got ${JSON.stringify(asIniFile)})`,
    );
  }
  problems.push(...embeddingProblems(values));
  const webClientSecret = nonEmpty(options.env.MEMORY_SERVICE_WEB_CLIENT_SECRET);
  if (values.WebClientId !== undefined) {
    if (values.OAuthAuthorizationServer === undefined || values.OAuthAuthorizationServer === values.BaseUrl) {
      problems.push('WebClientId: only for an external OAuthAuthorizationServer; the built-in authorization server has its own client for the page');
    } else if (webClientSecret === undefined) {
      problems.push('WebClientId: needs the client\'s secret in MEMORY_SERVICE_WEB_CLIENT_SECRET (secrets are read only from the environment)');
    }
  }

  if (problems.length > 0) throw new ConfigError(problems, configFile ?? 'environment and defaults');
  const v = values as SettingValues;
  const authorizationServer = v.OAuthAuthorizationServer;
  return deepFreeze({
    configFile,
    baseUrl: v.BaseUrl,
    resourceUrl: `${v.BaseUrl}/mcp`,
    host: v.Host,
    port: v.Port,
    database: {
      url: v.DatabaseUrl,
      schema: v.DatabaseSchema,
      dataDir: join(v.DataDir, 'pglite'),
      connectTimeoutMs: v.DatabaseConnectTimeoutMs,
      statementTimeoutMs: v.DatabaseStatementTimeoutMs,
    },
    dataDir: v.DataDir,
    embedding:
      v.EmbeddingProvider === 'local'
        ? { provider: 'local', workers: v.LocalModelWorkers ?? defaultLocalModelWorkers() }
        : {
            provider: 'openai',
            model: openaiModel(v.EmbeddingModel),
            dimensions: v.EmbeddingDimensions,
            baseUrl: v.OpenAIBaseUrl,
            // Only ever from the environment.
            apiKey: nonEmpty(options.env.OPENAI_API_KEY),
            timeoutMs: v.EmbeddingTimeoutMs,
            concurrency: v.EmbeddingConcurrency,
            queueLimit: v.EmbeddingQueueLimit,
          },
    memory: {
      maxTextChars: v.MaxTextChars,
      nearDuplicateThreshold: v.NearDuplicateThreshold,
      quota: { memories: v.MaxMemoriesPerSubject, textBytes: v.MaxBytesPerSubject },
    },
    oauth: {
      authorizationServer,
      builtIn: authorizationServer !== undefined && authorizationServer === v.BaseUrl,
      asIniFile: v.OAuthAsIniFile,
      audience: v.OAuthAudience ?? `${v.BaseUrl}/mcp`,
      subjectClaim: v.OAuthSubjectClaim,
      membershipClaim: v.OAuthMembershipClaim,
      clientMetadataAllowedHosts: v.OAuthClientMetadataAllowedHosts,
    },
    http: {
      allowedOrigins: v.AllowedOrigins,
      maxBodyBytes: v.MaxBodyBytes,
      rateLimitPerMinute: v.RateLimitPerMinute,
      trustProxy: v.TrustProxy,
    },
    metrics: { token: nonEmpty(options.env.MEMORY_SERVICE_METRICS_TOKEN), host: v.MetricsHost, port: v.MetricsPort },
    web: { clientId: v.WebClientId, clientSecret: webClientSecret, importMaxBytes: v.WebImportMaxBytes },
    logLevel: v.LogLevel,
  });
}

/**
 * One local-model worker per core, at most 4 (each holds the model: about 100 MB resident); one on a machine of
 * two cores or fewer, where the event loop and PGlite's thread take the other core and a second worker cost 70-100
 * MB to idle at 600 MB instead of 500 (issue 40).
 */
function defaultLocalModelWorkers(): number {
  const cores = availableParallelism();
  return cores <= 2 ? 1 : Math.min(4, cores);
}

const LOCAL_MODEL_NAMES = [LOCAL_MODEL_NAME, LOCAL_MODEL_NAME.slice('local:'.length)];

/** The API's model name: the setting without its optional `openai:` prefix, else the default model. */
function openaiModel(setting: string | undefined): string {
  return (setting ?? DEFAULT_OPENAI_MODEL).replace(/^openai:/, '');
}

/** Embedding settings that can never work together. */
function embeddingProblems(values: Partial<SettingValues>): string[] {
  const problems: string[] = [];
  if (values.EmbeddingProvider === 'local') {
    if (values.OpenAIBaseUrl !== undefined) problems.push('OpenAIBaseUrl: only applies when EmbeddingProvider = openai');
    if (values.EmbeddingModel !== undefined && !LOCAL_MODEL_NAMES.includes(values.EmbeddingModel)) {
      problems.push(
        `EmbeddingModel: the local embedding provider only supports ${LOCAL_MODEL_NAME}; use EmbeddingProvider = openai for other models (got ${JSON.stringify(values.EmbeddingModel)})`,
      );
    }
    if (values.EmbeddingDimensions !== undefined && values.EmbeddingDimensions !== LOCAL_MODEL_DIMENSIONS) {
      problems.push(`EmbeddingDimensions: the local embedding model has ${LOCAL_MODEL_DIMENSIONS} dimensions (got ${values.EmbeddingDimensions})`);
    }
  }
  if (values.EmbeddingProvider === 'openai' && openaiModel(values.EmbeddingModel) === '') {
    problems.push(`EmbeddingModel: names no model (got ${JSON.stringify(values.EmbeddingModel)})`);
  }
  return problems;
}

function readSettingsFile(file: string, problems: string[]): Partial<Record<SettingName, string>> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`cannot read configuration file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    return {};
  }
  const parsed = parseIni(text) as Record<string, unknown>;
  const known = new Set<string>(settingNames);
  const values: Partial<Record<SettingName, string>> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === 'object' && value !== null) {
      problems.push(`[${key}]: sections are not supported; settings are top-level keys`);
    } else if (!known.has(key) && /secret|api.?key|password|token/i.test(key)) {
      problems.push(`${key}: secrets are read only from the environment (OPENAI_API_KEY, MEMORY_SERVICE_METRICS_TOKEN, MEMORY_SERVICE_WEB_CLIENT_SECRET), never from the file`);
    } else if (!known.has(key)) {
      problems.push(`${key}: unknown setting`);
    } else {
      values[key as SettingName] = value === true ? '' : String(value);
    }
  }
  return values;
}

function embeddedDefaults(env: LoadConfigOptions['env']): { dataDir: string } {
  const dataHome = nonEmpty(env.XDG_DATA_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), '.local', 'share');
  return { dataDir: join(dataHome, 'memory-service') };
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
