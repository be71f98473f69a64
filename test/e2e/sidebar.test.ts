import assert from 'node:assert/strict';
import { join } from 'node:path';
import { screenshotsDir, startWorkbench, THEMES, type ThemeName, type Workbench } from './workbench.js';

describe('Sessions sidebar in the workbench (code-server + chromium)', () => {
  let wb: Workbench;
  before(async () => {
    wb = await startWorkbench();
  });
  after(async () => {
    await wb?.close();
  });

  it('opens, on a fresh profile, with the Fleet view collapsed under the Sessions view, which gets the side bar', async () => {
    await wb.open('light');
    await wb.command('Prefix Lens: Focus on Sessions View');
    await wb.page.getByRole('tree', { name: /Sessions/ }).getByRole('treeitem', { name: /pi lab session/ }).waitFor({ timeout: 60_000 });
    const fleet = wb.page.locator('.pane-header', { hasText: 'Fleet' });
    assert.equal(await fleet.getAttribute('aria-expanded'), 'false');
    const bar = (await wb.page.locator('.part.sidebar').boundingBox())!;
    const sessions = (await wb.page.locator('.pane', { has: wb.page.locator('.pane-header', { hasText: 'Sessions' }) }).boundingBox())!;
    // All of it but its title and the Fleet header (22 px each, at most 80 px together).
    assert.ok(sessions.height >= bar.height - 80, `Sessions ${sessions.height} px of a ${bar.height} px side bar`);
  });

  for (const theme of Object.keys(THEMES) as ThemeName[]) {
    it(`shows the recorded sessions with counts in the Sessions view (${theme} theme) and saves a screenshot`, async () => {
      await wb.open(theme);
      await wb.command('Prefix Lens: Focus on Sessions View');
      // 300 px: a narrow side bar, where a row's end is cut (its figures come first).
      await wb.sideBarWidth(300);
      // Fleet starts collapsed (package.json `visibility`); the tree renders only the rows in view,
      // so it stays collapsed here (the layout is restored on reload, so only when it is expanded).
      const fleetHeader = wb.page.locator('.pane-header[aria-expanded="true"]', { hasText: 'Fleet' });
      if (await fleetHeader.count()) await fleetHeader.click();
      const tree = wb.page.getByRole('tree', { name: /Sessions/ });
      const main = tree.getByRole('treeitem', { name: /pi lab session/ });
      await main.waitFor({ timeout: 60_000 });
      await tree.getByRole('treeitem', { name: /^pi lab session: 3 breaks, 64% cache hit rate, 13 requests, written / }).waitFor({ timeout: 60_000 });
      await tree.getByRole('treeitem', { name: /^Recorded: Anthropic turn one\.: 0 breaks, 80% cache hit rate, 5 requests, written / }).waitFor({ timeout: 60_000 });
      assert.equal(await tree.getByRole('treeitem', { name: /^Pi/ }).count(), 1);
      await wb.page.mouse.move(1300, 840);
      await wb.page.waitForTimeout(500);
      const file = join(screenshotsDir, `vscode-sidebar-${theme}.png`);
      await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: 760, height: 820 } });
      console.log(`      screenshot ${file}`);
      // The walkthrough's "Find your sessions" image: the Sessions view alone (npm run screenshots copies it).
      const bar = await wb.page.locator('.part.sidebar').boundingBox();
      if (bar) await wb.page.screenshot({ path: join(screenshotsDir, `walkthrough-sessions-${theme}.png`), clip: { x: bar.x, y: bar.y, width: bar.width, height: 400 } });
    });
  }

  it('says above the tree when a configured session folder cannot be read, and still lists the sessions', async () => {
    const missing = join(process.env.PREFIX_LENS_TEST_TMP ?? '/tmp', 'no-such-pi-folder');
    await wb.open('light', { 'prefixLens.sessionFolders.pi': [missing] });
    await wb.command('Prefix Lens: Focus on Sessions View');
    const note = wb.page.getByText('1 folder not read: see Output ▸ Prefix Lens');
    await note.waitFor({ timeout: 60_000 });
    await wb.page.getByRole('tree', { name: /Sessions/ }).getByRole('treeitem', { name: /pi lab session/ }).waitFor({ timeout: 60_000 });
    const file = join(screenshotsDir, 'vscode-sidebar-folder-not-read.png');
    await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: 760, height: 420 } });
    console.log(`      screenshot ${file}`);
  });
});
