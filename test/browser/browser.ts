/**
 * Shared setup of the browser suites: Debian's Chromium (installed by scripts/ensure-chromium.mjs
 * when missing) driven by playwright-core, a fresh profile per launch, no network.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
// @ts-expect-error plain ESM script without types
import { CHROMIUM_ARGS, ensureChromium } from '../../scripts/ensure-chromium.mjs';

/** Where test artifacts (screenshots, written reports) go; not in git (.gitignore has .tmp/). */
export const ARTIFACTS = resolve('.tmp/browser');

/** A browser with a fresh user-data-dir; `close` removes the profile. */
export interface TestBrowser {
  context: BrowserContext;
  /** A new page; `pageErrors` collects uncaught exceptions, console errors and CSP violations of every page. */
  page(opts?: { colorScheme?: 'light' | 'dark' }): Promise<Page>;
  pageErrors: string[];
  close(): Promise<void>;
}

/** Launches Chromium headless with the project's flags and a fresh profile. */
export async function launch(opts: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<TestBrowser> {
  const executablePath = (ensureChromium as () => string)();
  const profile = mkdtempSync(join(tmpdir(), 'prefix-lens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    args: CHROMIUM_ARGS as string[],
    headless: true,
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 },
    colorScheme: opts.colorScheme ?? 'light',
    offline: true,
  });
  const pageErrors: string[] = [];
  // Anything the CSP blocks (an eval, an injected inline script or handler) is an error too.
  await context.exposeFunction('__prefixLensCspViolation', (v: string) => pageErrors.push(`csp: ${v}`));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { __prefixLensCspViolation(v: string): void }).__prefixLensCspViolation(
        `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`,
      ),
    );
  });
  return {
    context,
    pageErrors,
    async page() {
      const p = await context.newPage();
      p.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
      p.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
      });
      return p;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Makes (once) and returns an artifacts subfolder. */
export function artifacts(sub: string): string {
  const d = join(ARTIFACTS, sub);
  mkdirSync(d, { recursive: true });
  return d;
}
