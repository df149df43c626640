import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './helpers/cli-command.js';

const STAMP = join(PROJECT_ROOT, 'dist', '.built-from-src');

const newestInput = (): number => {
  const inputs = ['tsconfig.json', 'tsconfig.build.json', ...readdirSync(join(PROJECT_ROOT, 'src'), { recursive: true, encoding: 'utf8' }).map((file) => join('src', file))];
  return Math.max(...inputs.map((file) => statSync(join(PROJECT_ROOT, file)).mtimeMs));
};

const builtAt = (): number => {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -Infinity;
  }
};

/**
 * Tests start the CLI as operators do, from dist/ (a start through tsx costs about 1.8 s more, and the suite starts
 * it hundreds of times). dist/ is rebuilt here, once per run, whenever src/ changed since it was last built.
 */
export default function buildWhenSourceChanged(): void {
  if (builtAt() >= newestInput()) return;
  const started = new Date();
  // The package's own build script, so that dist/ is built here exactly as `npm ci` and the image build it.
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  // The time the build began: a file saved during it is newer, so the next run builds again.
  writeFileSync(STAMP, '');
  utimesSync(STAMP, started, started);
}
