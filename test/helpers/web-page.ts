import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { submitLogin, type Credentials } from './browser.js';
import { TEST_DATABASE_URL, type Engine } from './engines.js';
import { sharedPGlite } from './shared.js';

export type Query = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * `read` in a transaction of the database owner that sees every subject's rows (on PostgreSQL the owner is held by
 * the forced row-level security too, so the maintenance setting admits every row; PGlite's owner is a superuser),
 * rolled back after: for tests that check what a request left in the tables.
 */
export async function readAsOwner<T>(engine: Engine, read: (query: Query) => Promise<T>): Promise<T> {
  const run = async (query: Query) => {
    await query(`select set_config('memory_service.all_subjects', 'on', true)`, []);
    return read(query);
  };
  if (engine === 'pglite') {
    return (await sharedPGlite()).transaction((tx) => run(async (text, params) => (await tx.query<Record<string, unknown>>(text, params)).rows));
  }
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('begin');
    return await run(async (text, params) => (await client.query(text, params)).rows as Record<string, unknown>[]);
  } finally {
    await client.query('rollback');
    await client.end();
  }
}

/** Screenshots of every screen go here (ignored by git), to be looked at. */
export const SCREENSHOTS = join(fileURLToPath(new URL('../../', import.meta.url)), '.artifacts', 'screenshots');

/** The whole page, and (`firstScreen`) also just what fits the viewport, as a person first sees it. */
export async function screenshot(page: Page, name: string, options: { firstScreen?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  if (options.firstScreen === true) await page.screenshot({ path: join(SCREENSHOTS, `${name}-first-screen.png`) });
}

/** Signs in from the page's own "Sign in" button through the built-in server's real login page. */
export async function signInOnPage(page: Page, baseUrl: string, credentials: Credentials): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.click('a.button:has-text("Sign in")');
  await page.waitForSelector('#password');
  const response = await submitLogin(page, credentials);
  expect(response.status()).toBeLessThan(400);
  await page.waitForURL(`${baseUrl}/`);
}

/** The CSRF token of the page's forms. */
export async function csrfOf(page: Page): Promise<string> {
  const value = await page.locator('input[name=csrf]').first().getAttribute('value');
  if (value === null || value === '') throw new Error('no CSRF token on the page');
  return value;
}

const axeSource = readFileSync(join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/** axe-core's serious and critical violations on the current page (needs a context that bypasses CSP). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe.run();
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => ({ target: node.target })) }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
