/**
 * The installed package, not the development folder: scripts/test.mjs (suite `installed`) builds
 * the VSIX (`npm run package` on a clean copy), and the workbench installs it with
 * `code-server --install-extension` into a fresh extensions folder and opens without any
 * extensionDevelopmentPath (PREFIX_LENS_VSIX). The same run also takes the browser suite's smoke
 * path against that installed copy (test/installed/.mocharc.json: the light-theme tests of
 * test/e2e/sidebar.test.ts — Pi and OpenCode sessions with counts, so the packaged worker and
 * sql.js wasm work — and test/e2e/timeline.test.ts — the Timeline from the palette, breaks by
 * accessible name).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWorkbench, type Workbench } from '../e2e/workbench.js';

/** The recorded Pi main session, as the fixture home holds it (scripts/test.mjs prepareFixtures). */
const PI_MAIN_DIR = '.pi/agent/sessions/--home-user-pi-lab-main-project--';

describe('Prefix Lens installed from its VSIX (code-server, no development path)', () => {
  let wb: Workbench;
  before(async function () {
    if (!process.env.PREFIX_LENS_VSIX) throw new Error('run through scripts/test.mjs --only=installed (PREFIX_LENS_VSIX)');
    wb = await startWorkbench();
  });
  after(async () => {
    await wb?.close();
  });

  it('is the one extension in the fresh extensions folder, unpacked from the VSIX, and the window is no Extension Development Host', async () => {
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'));
    const id = `${pkg.publisher}.${pkg.name}-${pkg.version}`;
    assert.ok(wb.extensionsDir, 'the workbench runs in installed mode');
    assert.deepEqual(readdirSync(wb.extensionsDir).filter((f) => f !== 'extensions.json' && !f.startsWith('.')), [id]);
    // what vsce packed (plus the .vsixmanifest VS Code keeps), not the project folder: no src/, test/, node_modules
    const installed = join(wb.extensionsDir, id);
    assert.deepEqual(readdirSync(installed).filter((f) => f !== '.vsixmanifest').sort(), ['LICENSE.txt', 'changelog.md', 'dist', 'package.json', 'readme.md', 'resources']);
    await wb.open('light');
    assert.doesNotMatch(await wb.page.title(), /Extension Development Host/);
  });

  it('puts the three breaks of an opened transcript in the Problems panel (lines 33, 38, 45)', async () => {
    await wb.open('light');
    const home = process.env.PREFIX_LENS_FIXTURE_HOME!;
    const file = join(home, PI_MAIN_DIR, readdirSync(join(home, PI_MAIN_DIR))[0]);
    await wb.quickOpen(file);
    await wb.command('View: Focus Problems');
    const warnings = wb.page.locator('.markers-panel [role=treeitem][aria-label^="Warning: Cache break"]');
    await warnings.nth(2).waitFor({ timeout: 90_000 });
    const labels = await warnings.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    assert.deepEqual(
      labels.map((l) => /^Warning: Cache break at request #(\d+):.* at line (\d+) and character 1\./.exec(l)?.slice(1)),
      [['9', '33'], ['10', '38'], ['13', '45']],
    );
    assert.match(labels[0], /history-rewritten \(compaction: history replaced by a summary at message 0\).*messages\[0\]\.content\[0\]\.text, byte 56/);
  });
});
