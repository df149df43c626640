import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { settingNames, settings } from '../../src/config/settings.js';

/**
 * docs/settings.md's table against the configuration schema, both ways: every setting documented once with its
 * environment variable, no documented setting that does not exist, and every documented default being what
 * applies. A default is checked by behaviour, not by copying it here: the configuration loaded with the setting
 * unset must equal the one loaded with the setting set to the documented default.
 */
interface Row {
  readonly env: string;
  /** The Default column as written. */
  readonly defaultCell: string;
}

const HEADER = '| Setting | Environment variable | Default | Meaning |';

function documentedRows(): Map<string, Row> {
  const doc = readFileSync(new URL('../../docs/settings.md', import.meta.url), 'utf8');
  const lines = doc.split('\n');
  const start = lines.indexOf(HEADER);
  if (start === -1) throw new Error(`docs/settings.md: no table headed ${HEADER}`);
  const rows = new Map<string, Row>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.slice(1, -1).split(' | ').map((cell) => cell.trim());
    const name = /^`(\w+)`$/.exec(cells[0] ?? '')?.[1];
    const env = /^`(\w+)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined || env === undefined || cells.length < 4) throw new Error(`docs/settings.md: malformed row: ${line}`);
    if (rows.has(name)) throw new Error(`docs/settings.md: ${name} is documented twice`);
    rows.set(name, { env, defaultCell: cells[2]! });
  }
  return rows;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const cwd = mkdtempSync(join(tmpdir(), 'docs-settings-'));
dirs.push(cwd);
const baseEnv = { HOME: '/home/ada', XDG_DATA_HOME: '/home/ada/data' };
// Some settings only reach the configuration with the OpenAI-compatible provider.
const bases: Record<string, Record<string, string>> = {
  local: baseEnv,
  openai: { ...baseEnv, MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai' },
};

const rows = documentedRows();

/**
 * The value a Default cell stands for, as it would be written in the file: `empty…` is unset, otherwise the
 * first `code` span, with `<Setting>` naming another setting's default and `$VAR` the environment.
 */
function documentedDefault(name: string, seen: readonly string[] = []): string {
  const cell = rows.get(name)?.defaultCell;
  if (cell === undefined) throw new Error(`${name} is not documented`);
  if (cell.startsWith('empty')) return '';
  const value = /^`([^`]*)`/.exec(cell)?.[1];
  if (value === undefined) throw new Error(`${name}: the Default column must start with \`value\` or "empty" (got ${cell})`);
  if (seen.includes(name)) throw new Error(`${name}: its default refers to itself`);
  return value
    .replace(/<(\w+)>/g, (_, other: string) => documentedDefault(other, [...seen, name]))
    .replace(/\$(\w+)/g, (_, variable: string) => baseEnv[variable as keyof typeof baseEnv] ?? `$${variable}`);
}

describe('docs/settings.md', () => {
  it('documents every setting of the schema, and no other', () => {
    expect([...rows.keys()].sort()).toEqual([...settingNames].sort());
  });

  it.each(settingNames)('names the environment variable of %s', (name) => {
    expect(rows.get(name)?.env).toBe(settings[name].env);
  });

  it.each(settingNames)('states the default of %s', (name) => {
    const value = documentedDefault(name);
    for (const [base, env] of Object.entries(bases)) {
      if (settings[name].env in env) continue;
      const unset = loadConfig({ cwd, env });
      const setToDocumented = loadConfig({ cwd, env: { ...env, [settings[name].env]: value } });
      expect(setToDocumented, `${name} = ${JSON.stringify(value)} with the ${base} provider`).toEqual(unset);
    }
  });
});
