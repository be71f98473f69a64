import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { screenshotsDir, startWorkbench, THEMES, type ThemeName, type Workbench } from './workbench.js';

/**
 * Every session row of the Sessions tree as the workbench draws it: its depth (aria-level), its
 * name, and how much of its description (the figures) shows before the row's ellipsis. The label
 * container (name + description) cuts with text-overflow: a character shows when it ends, plus an
 * ellipsis, inside the container.
 */
async function drawnRows(tree: Locator): Promise<Array<{ depth: number; name: string; shown: string }>> {
  // Session rows are the ones whose accessible name gives a hit rate.
  return tree.getByRole('treeitem', { name: /cache hit rate/ }).evaluateAll((els) =>
    els.map((e) => {
      const box = e.querySelector('.monaco-icon-label-container') as HTMLElement;
      const desc = e.querySelector('.label-description') as HTMLElement;
      const text = desc.firstChild as Text;
      const all = text.data;
      let shown = all;
      if (box.scrollWidth > box.clientWidth) {
        // The ellipsis is drawn in the container's font (the description's is smaller).
        const probe = document.createElement('span');
        probe.textContent = '…';
        box.append(probe);
        const ellipsis = probe.getBoundingClientRect().width;
        probe.remove();
        const right = box.getBoundingClientRect().left + box.clientWidth;
        const range = document.createRange();
        let n = 0;
        for (let i = 1; i <= all.length; i++) {
          range.setStart(text, 0);
          range.setEnd(text, i);
          if (range.getBoundingClientRect().right + ellipsis <= right) n = i;
          else break;
        }
        shown = all.slice(0, n);
      }
      return { depth: Number(e.getAttribute('aria-level')), name: e.querySelector('.label-name')?.textContent ?? '', shown };
    }),
  );
}

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
      // What matters survives the cut: every row's break count, and under a project (depth 3, its
      // name cut to 14 characters) the hit rate too; right under a host (22 characters) a long name
      // can leave "1 break · 31…" of it.
      const summarized = tree.getByRole('treeitem', { name: /cache hit rate/ });
      for (let t0 = Date.now(); (await summarized.count()) < 13 && Date.now() - t0 < 60_000; ) await wb.page.waitForTimeout(200);
      const drawn = await drawnRows(tree);
      for (const r of drawn) console.log(`      depth ${r.depth}: ${r.name} | ${r.shown}`);
      assert.equal(drawn.length, 13);
      assert.deepEqual(drawn.filter((r) => !/^\d+ breaks? · /.test(r.shown) || (r.depth === 3 && !/^\d+ breaks? · \d+%/.test(r.shown))), []);
      await wb.page.mouse.move(1300, 840);
      await wb.page.waitForTimeout(500);
      const file = join(screenshotsDir, `vscode-sidebar-${theme}.png`);
      const bar = (await wb.page.locator('.part.sidebar').boundingBox())!;
      // The activity bar and the side bar as wide as it is, nothing of the empty editor area.
      await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: bar.x + bar.width, height: 820 } });
      console.log(`      screenshot ${file}`);
      // The walkthrough's "Find your sessions" image: the Sessions view alone (npm run screenshots copies it).
      await wb.page.screenshot({ path: join(screenshotsDir, `walkthrough-sessions-${theme}.png`), clip: { x: bar.x, y: bar.y, width: bar.width, height: 400 } });
    });
  }

  it('in a wide side bar (560 px) shows every session row whole (figures and age), the names cut at 22 characters (14 under a project) all the same, and saves a screenshot', async () => {
    await wb.open('light');
    await wb.command('Prefix Lens: Focus on Sessions View');
    await wb.sideBarWidth(560);
    const tree = wb.page.getByRole('tree', { name: /Sessions/ });
    await tree.getByRole('treeitem', { name: /^pi lab session: 3 breaks/ }).waitFor({ timeout: 60_000 });
    await tree.getByRole('treeitem', { name: /^Recorded: Compaction session turn one\.: 2 breaks/ }).waitFor({ timeout: 60_000 });
    // Session rows are the ones whose accessible name gives a hit rate; a row is cut when its label
    // container (name + description) holds more than it shows.
    const rows = await tree.getByRole('treeitem', { name: /cache hit rate/ }).evaluateAll((els) =>
      els.map((e) => {
        const box = e.querySelector('.monaco-icon-label-container') as HTMLElement;
        return { name: e.querySelector('.label-name')?.textContent ?? '', cut: box.scrollWidth > box.clientWidth };
      }),
    );
    assert.equal(rows.length, 13);
    assert.deepEqual(rows.filter((r) => r.cut).map((r) => r.name), []);
    assert.ok(rows.some((r) => r.name === 'Recorded:…') && rows.some((r) => r.name === 'Parser review (Sonnet)'), JSON.stringify(rows));
    await wb.page.mouse.move(1300, 840);
    await wb.page.waitForTimeout(500);
    const bar = (await wb.page.locator('.part.sidebar').boundingBox())!;
    const file = join(screenshotsDir, 'vscode-sidebar-wide.png');
    await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: bar.x + bar.width, height: 620 } });
    console.log(`      screenshot ${file}`);
  });

  it("shows a row's hover when it is hovered (built then, by resolveTreeItem): a session's figures as a table, a host's counts as text, and saves a screenshot", async () => {
    await wb.open('light');
    await wb.command('Prefix Lens: Focus on Sessions View');
    await wb.sideBarWidth(300);
    const tree = wb.page.getByRole('tree', { name: /Sessions/ });
    const main = tree.getByRole('treeitem', { name: /^pi lab session: 3 breaks/ });
    await main.waitFor({ timeout: 60_000 });
    const hover = wb.page.locator('.workbench-hover').filter({ visible: true });
    // A host's hover is a plain string: shown as text, its line break kept.
    await tree.getByRole('treeitem', { name: /^Claude Code: 1 session/ }).locator('.label-name').hover();
    await hover.getByText('Claude Code: 1 session').waitFor({ timeout: 20_000 });
    assert.equal(await hover.innerText(), 'Claude Code: 1 session\nproject /tmp/prefix-lens-cc-lab/project');
    await wb.page.mouse.move(1300, 840);
    await hover.waitFor({ state: 'hidden', timeout: 20_000 });
    await main.locator('.label-name').hover();
    await hover.locator('table').waitFor({ timeout: 20_000 });
    // appendText writes the spaces of untrusted text as &nbsp; (U+00A0 once rendered).
    const text = (await hover.innerText()).replaceAll("\u00a0", " ");
    assert.match(text, /pi lab session\s+01a230ec-9a4e-7417-8af1-68d34234bdc8/);
    assert.match(text, /13 requests · 3 breaks · hit rate 64%/);
    assert.match(text, /cache read\s+19,124/);
    const bar = (await wb.page.locator('.part.sidebar').boundingBox())!;
    const tip = (await hover.boundingBox())!;
    const file = join(screenshotsDir, 'vscode-sidebar-hover.png');
    await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: Math.max(bar.x + bar.width, tip.x + tip.width) + 8, height: Math.max(480, tip.y + tip.height + 8) } });
    console.log(`      screenshot ${file}`);
    await wb.page.mouse.move(1300, 840);
  });

  it('says above the tree when a configured session folder cannot be read, and still lists the sessions', async () => {
    const missing = join(process.env.PREFIX_LENS_TEST_TMP ?? '/tmp', 'no-such-pi-folder');
    await wb.open('light', { 'prefixLens.sessionFolders.pi': [missing] });
    await wb.command('Prefix Lens: Focus on Sessions View');
    await wb.sideBarWidth(300);
    const note = wb.page.getByText('1 folder not read: see Output ▸ Prefix Lens');
    await note.waitFor({ timeout: 60_000 });
    await wb.page.getByRole('tree', { name: /Sessions/ }).getByRole('treeitem', { name: /pi lab session/ }).waitFor({ timeout: 60_000 });
    const file = join(screenshotsDir, 'vscode-sidebar-folder-not-read.png');
    const bar = (await wb.page.locator('.part.sidebar').boundingBox())!;
    await wb.page.screenshot({ path: file, clip: { x: 0, y: 0, width: bar.x + bar.width, height: 420 } });
    console.log(`      screenshot ${file}`);
  });
});
