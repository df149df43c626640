// Installs the real MCP clients the tests drive (conformance suite, Inspector CLI) and the Node 22 they
// need, from this folder's lockfile, into this folder's node_modules. Run by the root `postinstall`, so a
// plain `npm ci` sets up everything `npm test` uses. A separate tree because the `node` package links a
// `node` binary into node_modules/.bin, which in the root would make every npm script run on Node 22.
// Skipped for production installs and when the lockfile has not changed since the last install.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const marker = join(here, 'node_modules', '.installed-lock-sha256');
const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);

if (omitted.includes('dev') || process.env.NODE_ENV === 'production') process.exit(0);

const lockHash = createHash('sha256').update(readFileSync(join(here, 'package-lock.json'))).digest('hex');
if (existsSync(join(here, 'node_modules', 'node', 'bin', 'node')) && existsSync(marker) && readFileSync(marker, 'utf8') === lockHash) {
  process.exit(0);
}

// npm exports its settings to lifecycle scripts as npm_config_*; the child npm must read its own (the
// parent's prefix or `omit` would otherwise leak into this install).
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: here, env, stdio: 'inherit' });
if (result.status !== 0) {
  console.error(`test/clients/runtime: npm ci failed (exit ${result.status ?? result.signal})`);
  process.exit(result.status ?? 1);
}
writeFileSync(marker, lockHash);
