import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { redactCredentials } from '../../src/config/redact.js';
import { runCli } from '../helpers/cli.js';

const PASSWORD = 'Hunter2-Zq9x';

describe('redactCredentials', () => {
  it.each([
    [`postgres://app:${PASSWORD}@db.internal:5432/memory`, 'postgres://app:***@db.internal:5432/memory'],
    [`postgresql://app:${PASSWORD}@db/memory?sslmode=require`, 'postgresql://app:***@db/memory?sslmode=require'],
    [`postgres://app:pa/ss@w:rd@db/memory`, 'postgres://app:***@db/memory'],
    [`postgres://:${PASSWORD}@db/memory`, 'postgres://:***@db/memory'],
    [`postgres://db/memory?user=app&password=${PASSWORD}&sslpassword=${PASSWORD}`, 'postgres://db/memory?user=app&password=***&sslpassword=***'],
    [`https://api.example.com/v1?api_key=${PASSWORD}#x`, 'https://api.example.com/v1?api_key=***#x'],
    [`mysql://root:${PASSWORD}@h:notaport/db`, 'mysql://root:***@h:notaport/db'],
  ])('hides the password in %s', (value, printed) => {
    expect(redactCredentials(value)).toBe(printed);
    expect(redactCredentials(value)).not.toContain(PASSWORD);
  });

  it.each(['postgres://app@db/memory', 'https://memory.example.com/mcp', 'http://127.0.0.1:8787', '/var/lib/memory-service'])('leaves %s as it is', (value) => {
    expect(redactCredentials(value)).toBe(value);
  });
});

describe('configuration errors never print credentials', () => {
  const env = (extra: Record<string, string>) => ({ HOME: mkdtempSync(join(tmpdir(), 'memory-service-redact-')), ...extra });
  const problemsOf = (extra: Record<string, string>): string => {
    try {
      loadConfig({ env: env(extra), cwd: tmpdir() });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).message;
    }
    throw new Error('expected a ConfigError');
  };

  it.each([
    ['a DatabaseUrl of another scheme', { MEMORY_SERVICE_DATABASE_URL: `mysql://root:${PASSWORD}@db/app` }, /DatabaseUrl: must be a postgres:\/\/ URL \(got "mysql:\/\/root:\*\*\*@db\/app"\)/],
    ['a DatabaseUrl that is not a URL', { MEMORY_SERVICE_DATABASE_URL: `postgres://root:${PASSWORD}@db:notaport/app` }, /DatabaseUrl: is not a valid URL \(got "postgres:\/\/root:\*\*\*@db:notaport\/app"\)/],
    ['a password in a query parameter', { MEMORY_SERVICE_DATABASE_URL: `mysql://db/app?password=${PASSWORD}` }, /password=\*\*\*/],
    ['a BaseUrl with credentials', { MEMORY_SERVICE_BASE_URL: `https://admin:${PASSWORD}@memory.example.com` }, /BaseUrl: must not contain a user name or password \(got "https:\/\/admin:\*\*\*@memory.example.com"\)/],
    ['an OAuthAuthorizationServer with credentials', { MEMORY_SERVICE_OAUTH_AUTHORIZATION_SERVER: `https://admin:${PASSWORD}@login.example.com` }, /OAuthAuthorizationServer: must not contain a user name or password/],
  ])('%s', (_name, extra, message) => {
    const printed = problemsOf(extra);
    expect(printed).toMatch(message);
    expect(printed).not.toContain(PASSWORD);
  });

  it('prints no password from the command line either, whatever fails first (configuration or connection)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'memory-service-redact-'));
    writeFileSync(join(home, 'bad.ini'), `DatabaseUrl = mysql://root:${PASSWORD}@db/app\n`);
    for (const [args, extra] of [
      [['migrate', '--config', join(home, 'bad.ini')], {}],
      [['migrate'], { MEMORY_SERVICE_DATABASE_URL: `postgres://root:${PASSWORD}@127.0.0.1:1/app` }],
      [['migrate'], { MEMORY_SERVICE_DATABASE_URL: `postgres://root:${PASSWORD}@db:notaport/app` }],
    ] as const) {
      const { code, stdout, stderr } = await runCli(args, { HOME: home, ...extra });
      expect(code, stderr).not.toBe(0);
      expect(stderr.length).toBeGreaterThan(0);
      expect(stdout + stderr).not.toContain(PASSWORD);
    }
  });
});
