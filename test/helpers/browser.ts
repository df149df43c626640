import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser as ChromiumBrowser, type BrowserContext, type Page, type Response } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`), driven by playwright-core. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Undefined when browser tests can run; otherwise why they are skipped. In CI a missing chromium is an
 * error, not a skip: the login flow must be proven there.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
    throw new Error(`${CHROMIUM_PATH} is missing in CI: .ci/run must install Debian's chromium`);
  }
  return `browser tests skipped: ${CHROMIUM_PATH} not found (apt-get install -y chromium)`;
}

export interface Browser {
  readonly context: BrowserContext;
  /**
   * The one tab every flow runs in. Opening and closing tabs now and then never returns with Debian's
   * chromium under load, so tests navigate this one instead.
   */
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * A fresh headless chromium with its own profile (no cookies carried between launches). `extraArgs` are
 * further command-line switches (a test's host mapping or certificate trust).
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'memory-service-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
  // Fail with the step that stalled rather than at the test's own timeout.
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A loopback redirect URI like a desktop client's: records every callback it receives. */
export interface CallbackServer {
  readonly redirectUri: string;
  /** The next callback URL (code, state, iss or error, error_description). */
  next(timeoutMs?: number): Promise<URL>;
  close(): Promise<void>;
}

export async function startCallbackServer(path = '/callback'): Promise<CallbackServer> {
  const waiting: ((url: URL) => void)[] = [];
  const received: URL[] = [];
  let base = '';
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', base);
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<p>Signed in. You can close this window.</p>');
    const resolve = waiting.shift();
    if (resolve !== undefined) resolve(url);
    else received.push(url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    redirectUri: `${base}${path}`,
    next: (timeoutMs = 20_000) => {
      const already = received.shift();
      if (already !== undefined) return Promise.resolve(already);
      return new Promise<URL>((resolve, reject) => {
        const waiter = (url: URL) => {
          clearTimeout(timer);
          resolve(url);
        };
        // A waiter that gave up must not swallow a later test's callback.
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(new Error(`no callback reached ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.push(waiter);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** Fills the real sign-in page and submits it; resolves to the response of the form post. */
export async function submitLogin(page: Page, credentials: Credentials): Promise<Response> {
  await page.fill('#username', credentials.username);
  await page.fill('#password', credentials.password);
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.request().method() === 'POST' && candidate.url().endsWith('/login')),
    page.click('button[type=submit]'),
  ]);
  await page.waitForLoadState();
  return response;
}

/**
 * Runs the user's part of an authorization request in the browser: opens the URL, signs in on the login
 * page, answers the consent page, and returns the callback the client received.
 */
export async function authorizeInBrowser(
  browser: Browser,
  callbacks: CallbackServer,
  authorizationUrl: URL | string,
  credentials: Credentials,
  decision: 'allow' | 'deny' = 'allow',
): Promise<URL> {
  const { page } = browser;
  const callback = callbacks.next();
  await page.goto(String(authorizationUrl));
  if ((await page.locator('#password').count()) > 0) {
    const response = await submitLogin(page, credentials);
    if (response.status() >= 400) throw new Error(`sign-in refused: HTTP ${response.status()}`);
  }
  // Consent is skipped when this browser session already granted it: the callback may come first.
  const consent = page.waitForSelector(`button[value=${decision}]`).then(
    () => undefined,
    () => undefined,
  );
  const first = await Promise.race([callback, consent]);
  if (first !== undefined) return first;
  await page.click(`button[value=${decision}]`);
  return await callback;
}

/**
 * `authorizeInBrowser` in a browser of its own, closed afterwards. Chromium keeps a spare connection open
 * that a server's graceful close waits for, so tests that restart the server use this.
 */
export async function authorizeInFreshBrowser(
  callbacks: CallbackServer,
  authorizationUrl: URL | string,
  credentials: Credentials,
  decision: 'allow' | 'deny' = 'allow',
  browserArgs: readonly string[] = [],
): Promise<URL> {
  const browser = await launchBrowser(browserArgs);
  try {
    return await authorizeInBrowser(browser, callbacks, authorizationUrl, credentials, decision);
  } finally {
    await browser.close();
  }
}


/**
 * A headless chromium for tests that need several independent contexts (JavaScript off, a phone's viewport, a
 * context that bypasses the page's CSP to inject a checker): each context has its own cookies.
 */
export async function launchChromium(): Promise<ChromiumBrowser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
