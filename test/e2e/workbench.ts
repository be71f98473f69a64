/**
 * The VS Code workbench (code-server) in chromium with Prefix Lens loaded in development mode, for
 * the browser suite. Environment from scripts/test.mjs: PREFIX_LENS_VSCODE_ENV_DIR (code-server +
 * Node 24), PREFIX_LENS_FIXTURE_HOME (HOME with the recorded sessions), PREFIX_LENS_WORKSPACE.
 * Installed mode (suite `installed`): PREFIX_LENS_VSIX names a built package; it is installed into
 * the server's fresh extensions folder and the workbench opens with no extensionDevelopmentPath.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type FrameLocator, type Page } from 'playwright-core';
// @ts-expect-error plain ES module without types (scripts/vscode/codeServer.mjs)
import { launchChromium, remoteUri, startCodeServer, workbenchUrl } from '../../scripts/vscode/codeServer.mjs';

export const repo = resolve(__dirname, '../..');
export const screenshotsDir = process.env.PREFIX_LENS_SCREENSHOTS_DIR ?? join(repo, 'out/screenshots');

/** Theme ids (as VS Code 1.139 names them; older "Default …" ids are migrated on load) and the class the workbench gets once applied. */
export const THEMES = {
  light: { id: 'Light Modern', cls: 'vscode-theme-defaults-themes-light_modern-json' },
  dark: { id: 'Dark Modern', cls: 'vscode-theme-defaults-themes-dark_modern-json' },
  'high-contrast': { id: 'Default High Contrast', cls: 'vscode-theme-defaults-themes-hc_black-json' },
} as const;
export type ThemeName = keyof typeof THEMES;

export interface Workbench {
  page: Page;
  /** Reloads the workbench with a color theme (and more user settings) and waits until the theme is applied. */
  open(theme: ThemeName, settings?: Record<string, unknown>): Promise<void>;
  /**
   * Drags the side bar to `px` pixels wide. Absolute, not relative: the layout is saved in the
   * user data folder and restored on every reload, so widening by a step per theme would add up.
   */
  sideBarWidth(px: number): Promise<void>;
  /** Runs a command through the command palette (F1), retrying until the command is listed. */
  command(title: string): Promise<void>;
  /** Opens a file by its absolute path through Quick Open (Ctrl+P). */
  quickOpen(path: string): Promise<void>;
  /** The Timeline webview's content frame (`iframe.webview.ready` → `#active-frame`). */
  webview(): FrameLocator;
  /** Installed mode: the server's extensions folder holding the unpacked VSIX; else undefined. */
  extensionsDir?: string;
  close(): Promise<void>;
}

export async function startWorkbench(): Promise<Workbench> {
  const envDir = process.env.PREFIX_LENS_VSCODE_ENV_DIR;
  const home = process.env.PREFIX_LENS_FIXTURE_HOME;
  const workspace = process.env.PREFIX_LENS_WORKSPACE;
  if (!envDir || !home || !workspace) throw new Error('run through scripts/test.mjs (PREFIX_LENS_VSCODE_ENV_DIR, PREFIX_LENS_FIXTURE_HOME, PREFIX_LENS_WORKSPACE)');
  mkdirSync(screenshotsDir, { recursive: true });
  const vsix = process.env.PREFIX_LENS_VSIX;
  // The Fleet view asks the recorded 5-pane fleet (fake phux) so its screenshots show a fleet.
  const phux = join(repo, 'test/fixtures/phux/fake-phux.mjs');
  const server = await startCodeServer({ envDir, workspace, home, vsix, settings: { 'workbench.colorTheme': THEMES.light.id, 'prefixLens.phux.path': phux } });
  const browser = await launchChromium(chromium);
  const page: Page = browser.ctx.pages()[0] ?? (await browser.ctx.newPage());
  const url = workbenchUrl(server.port, workspace, [
    ...(vsix ? [] : [['extensionDevelopmentPath', remoteUri(server.port, repo)]]),
    ['skipWelcome', 'true'],
  ]);
  return {
    page,
    extensionsDir: vsix ? server.extensionsDir : undefined,
    async open(theme, settings = {}) {
      server.writeSettings({ ...settings, 'workbench.colorTheme': THEMES[theme].id });
      await page.goto(url, { timeout: 180_000 });
      await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 90_000 });
      // The theme is applied a few seconds after the status bar appears.
      await page.waitForSelector(`.monaco-workbench.${THEMES[theme].cls}`, { timeout: 60_000 });
    },
    async sideBarWidth(px) {
      // Drag the sash on the side bar's right edge (the grid puts one there, centred on the border).
      const box = await page.locator('.part.sidebar').boundingBox();
      if (!box || Math.abs(box.width - px) < 2) return;
      const x = box.x + box.width;
      const y = box.y + box.height / 2;
      await page.mouse.move(x, y);
      await page.mouse.down();
      await page.mouse.move(box.x + px, y, { steps: 8 });
      await page.mouse.up();
    },
    async command(title) {
      for (let attempt = 1; ; attempt++) {
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input.input').first();
        await input.waitFor({ state: 'visible' });
        await input.fill(`>${title}`);
        const option = page.locator('.quick-input-widget [role=option]', { hasText: title }).first();
        try {
          await option.waitFor({ timeout: 3000 });
          break;
        } catch (e) {
          // The palette lists commands when it opens: the extension's may not be registered yet.
          if (attempt >= 20) throw e;
          await page.keyboard.press('Escape');
          await page.waitForTimeout(1000);
        }
      }
      await page.keyboard.press('Enter');
    },
    async quickOpen(path) {
      await page.keyboard.press('Control+P');
      const input = page.locator('.quick-input-widget input.input').first();
      await input.waitFor({ state: 'visible' });
      await input.fill(path);
      await page.locator('.quick-input-widget [role=option]').first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Enter');
      await page.locator('.editor-group-container .tab.active').first().waitFor({ timeout: 30_000 });
    },
    webview() {
      return page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
    },
    async close() {
      await browser.close();
      await server.stop();
    },
  };
}
