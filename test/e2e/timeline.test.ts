import assert from 'node:assert/strict';
import { join } from 'node:path';
import { screenshotsDir, startWorkbench, THEMES, type ThemeName, type Workbench } from './workbench.js';

/** The webview body's theme class VS Code sets for each workbench theme. */
const BODY_CLASS: Record<ThemeName, string> = { light: 'vscode-light', dark: 'vscode-dark', 'high-contrast': 'vscode-high-contrast' };

describe('Timeline panel in the workbench (code-server + chromium)', () => {
  let wb: Workbench;
  before(async () => {
    wb = await startWorkbench();
  });
  after(async () => {
    await wb?.close();
  });

  for (const theme of Object.keys(THEMES) as ThemeName[]) {
    it(`opens the Timeline of the recorded Pi session from the command palette; requests and breaks by accessible name; a break's detail (${theme} theme)`, async () => {
      await wb.open(theme);
      await wb.command('Prefix Lens: Focus on Sessions View');
      await wb.sideBarWidth(420);
      await wb.page.getByRole('treeitem', { name: /^pi lab session: 3 breaks, 64% cache hit rate, 13 requests/ }).waitFor({ timeout: 60_000 });
      await wb.command('Prefix Lens: Open Timeline…');
      const input = wb.page.locator('.quick-input-widget input.input').first();
      await input.fill('pi lab session');
      await wb.page.locator('.quick-input-widget [role=option]', { hasText: 'pi lab session' }).first().waitFor({ timeout: 30_000 });
      await wb.page.keyboard.press('Enter');

      const app = wb.webview();
      await app.locator(`body.${BODY_CLASS[theme]}`).waitFor({ timeout: 60_000 });
      const requests = app.getByRole('listbox', { name: 'Requests' });
      await requests.getByRole('option').first().waitFor({ timeout: 60_000 });
      assert.equal(await requests.getByRole('option').count(), 13);
      const names = await requests.getByRole('option').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
      assert.deepEqual(
        names.filter((n) => /: break/.test(n ?? '')),
        ['Request 9: break, history-rewritten', 'Request 10: break, history-rewritten', 'Request 13: break, history-rewritten'],
      );
      assert.equal(names[0], 'Request 1: cold');
      // From the second theme on, the panel of the last window was restored on reload: the command
      // must reveal that one, not open a second.
      assert.equal(await wb.page.locator('.tabs-container .tab', { hasText: 'Timeline: pi lab session' }).count(), 1);

      await requests.getByRole('option', { name: 'Request 10: break, history-rewritten' }).click();
      const detail = app.getByRole('region', { name: 'Request detail' });
      await detail.getByText('Request 10').waitFor({ timeout: 10_000 });
      const text = await detail.innerText();
      assert.match(text, /history-rewritten/);
      // Pi kept its thinking level over the /tree navigation (the body says budget 16384): no params change.
      assert.doesNotMatch(text, /params-changed/);
      assert.match(text, /messages\[2\]\.content\[0\]\.text/);
      await wb.page.mouse.move(1390, 850);
      await wb.page.waitForTimeout(500);
      const file = join(screenshotsDir, `vscode-timeline-${theme}.png`);
      await wb.page.screenshot({ path: file });
      console.log(`      screenshot ${file}`);
      // The walkthrough's "Open a Timeline" image: the panel's summary and chart (npm run screenshots copies it).
      const editor = await wb.page.locator('.part.editor').boundingBox();
      if (editor) await wb.page.screenshot({ path: join(screenshotsDir, `walkthrough-timeline-${theme}.png`), clip: { x: editor.x, y: editor.y, width: Math.min(editor.width, 900), height: 560 } });
    });
  }

  it('restores the open Timeline after a window reload, without any command, with its requests', async () => {
    // The last test left the Timeline open. "Reload Window" shuts the workbench down as a user's
    // reload does (its state, open editors included, is saved first; a bare navigation may lose
    // it), then the panel serializer restores the Timeline.
    await Promise.all([wb.page.waitForEvent('load', { timeout: 180_000 }), wb.command('Developer: Reload Window')]);
    await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: 90_000 });
    await wb.page.locator('.tabs-container .tab', { hasText: 'Timeline: pi lab session' }).waitFor({ timeout: 60_000 });
    const app = wb.webview();
    await app.locator('body.vscode-high-contrast').waitFor({ timeout: 60_000 });
    const requests = app.getByRole('listbox', { name: 'Requests' });
    await requests.getByRole('option').first().waitFor({ timeout: 90_000 });
    assert.equal(await requests.getByRole('option').count(), 13);
    assert.equal(await wb.page.locator('.tabs-container .tab', { hasText: 'Timeline: pi lab session' }).count(), 1);
  });

  it('"Compare with #8" in a break\'s detail opens #8 ↔ #9 in a diff editor at the changed line', async () => {
    const app = wb.webview();
    const requests = app.getByRole('listbox', { name: 'Requests' });
    await requests.getByRole('option', { name: 'Request 9: break, history-rewritten' }).click();
    const detail = app.getByRole('region', { name: 'Request detail' });
    await detail.getByText('Request 9').waitFor({ timeout: 10_000 });
    const compare = detail.getByRole('button', { name: 'Compare with #8' });
    // The detail as a user reads it before clicking: verdict, causes, break point and the button.
    await compare.scrollIntoViewIfNeeded();
    await wb.page.waitForTimeout(300);
    const detailFile = join(screenshotsDir, 'vscode-request-detail.png');
    // The editor part as the user sees it (an element screenshot inside the webview's nested frames comes out black).
    const editorPart = await wb.page.locator('.part.editor').boundingBox();
    await wb.page.screenshot({ path: detailFile, ...(editorPart ? { clip: editorPart } : {}) });
    console.log(`      screenshot ${detailFile}`);
    await compare.click();
    const tab = wb.page.locator('.tabs-container .tab', { hasText: 'pi lab session: #8 ↔ #9' });
    await tab.waitFor({ timeout: 60_000 });
    assert.match((await tab.getAttribute('aria-label')) ?? '', /verdict break \(history-rewritten\) · first difference in block 2 \(messages · messages\[0\]\.content\[0\]\.text\), byte 49 of the block, prefix byte 56/);
    const diff = wb.page.locator('.monaco-diff-editor').first();
    await diff.waitFor({ timeout: 30_000 });
    // Both sides show the header line of the block the break falls in.
    await diff.locator('.view-line', { hasText: 'block' }).first().waitFor({ timeout: 30_000 });
    await wb.page.waitForTimeout(500);
    const file = join(screenshotsDir, 'vscode-request-diff.png');
    await wb.page.screenshot({ path: file });
    console.log(`      screenshot ${file}`);
  });

  it('fits a narrow panel (500 px, the Timeline beside an editor): the legend gives one word per entry; saves a screenshot', async () => {
    // The reload restores the Timeline (and the diff of the last test): its tab is brought forward.
    await wb.open('light');
    await wb.page.locator('.tabs-container .tab', { hasText: 'Timeline: pi lab session' }).click();
    const wide = (await wb.page.locator('.part.editor').boundingBox())!;
    const viewport = wb.page.viewportSize()!;
    try {
      // The editor part takes what the window loses; the side bar keeps its width.
      await wb.page.setViewportSize({ width: Math.round(viewport.width - (wide.width - 500)), height: viewport.height });
      const app = wb.webview();
      await app.locator('body.vscode-light').waitFor({ timeout: 60_000 });
      await app.getByRole('listbox', { name: 'Requests' }).getByRole('option').first().waitFor({ timeout: 60_000 });
      const editor = (await wb.page.locator('.part.editor').boundingBox())!;
      assert.ok(Math.abs(editor.width - 500) <= 2, `editor ${editor.width} px`);
      const legend = app.getByRole('region', { name: 'Legend' });
      await legend.locator('.pl-legend-short', { hasText: 'written' }).waitFor({ timeout: 10_000 });
      assert.equal(await legend.locator('.pl-legend-long').filter({ visible: true }).count(), 0);
      await wb.page.mouse.move(viewport.width - 10, viewport.height - 10);
      await wb.page.waitForTimeout(500);
      const file = join(screenshotsDir, 'vscode-timeline-narrow.png');
      await wb.page.screenshot({ path: file, clip: editor });
      console.log(`      screenshot ${file}`);
    } finally {
      await wb.page.setViewportSize(viewport);
    }
  });
});
