// `npm run screenshots`: regenerates the committed screenshots from the real workbench.
//   e2e suite (development path)  → docs/screenshots/vscode-{sidebar,timeline}-<theme>.png,
//                                     docs/screenshots/vscode-sidebar-wide.png, vscode-timeline-narrow.png,
//                                     docs/screenshots/vscode-request-{detail,diff}.png, and the
//                                     walkthrough images resources/walkthrough/{sessions,timeline}-{light,dark}.png
//   installed suite (the VSIX)     → docs/screenshots/vscode/timeline-light.png (the Marketplace page's)
//   browser test of `--html`       → docs/screenshots/timeline-{light,dark}.png (the standalone report)
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (suite, dir) => {
  const r = spawnSync('node', ['scripts/test.mjs', `--only=${suite}`], { cwd: repo, stdio: 'inherit', env: { ...process.env, PREFIX_LENS_SCREENSHOTS_DIR: dir } });
  if (r.status !== 0) throw new Error(`the ${suite} suite failed: screenshots not updated`);
};
const shots = mkdtempSync(join(tmpdir(), 'prefix-lens-shots-'));
try {
  run('e2e', shots);
  for (const t of ['light', 'dark', 'high-contrast']) {
    for (const v of ['sidebar', 'timeline']) copyFileSync(join(shots, `vscode-${v}-${t}.png`), join(repo, 'docs/screenshots', `vscode-${v}-${t}.png`));
  }
  // The side bar wide (560 px, light) and the Timeline in a narrow panel (500 px, light).
  for (const f of ['vscode-sidebar-wide.png', 'vscode-timeline-narrow.png']) copyFileSync(join(shots, f), join(repo, 'docs/screenshots', f));
  // "Compare with #8" from the Timeline: the diff editor (the suite's last theme, high contrast).
  copyFileSync(join(shots, 'vscode-request-diff.png'), join(repo, 'docs/screenshots/vscode-request-diff.png'));
  // The detail of #9 with its "Compare with #8" button, just before the click.
  copyFileSync(join(shots, 'vscode-request-detail.png'), join(repo, 'docs/screenshots/vscode-request-detail.png'));
  // The walkthrough shows the light image in light themes, the dark one in dark and high-contrast themes.
  for (const t of ['light', 'dark']) {
    for (const v of ['sessions', 'timeline']) copyFileSync(join(shots, `walkthrough-${v}-${t}.png`), join(repo, 'resources/walkthrough', `${v}-${t}.png`));
  }
  // The installed suite runs the e2e Timeline smoke path against the VSIX: its light Timeline is the
  // Marketplace page's (no "Extension Development Host" in the title bar).
  const installed = join(shots, 'installed');
  run('installed', installed);
  copyFileSync(join(installed, 'vscode-timeline-light.png'), join(repo, 'docs/screenshots/vscode/timeline-light.png'));
  // The standalone report's two palettes, from its browser test alone (a config of its own: the
  // project's .mocharc would add every spec).
  const config = join(shots, 'mocharc.json');
  writeFileSync(config, JSON.stringify({ 'node-option': ['import=tsx'], require: ['test/hooks.ts'], timeout: 60000 }));
  const r = spawnSync('npx', ['mocha', '--config', config, 'test/browser/timeline-report.test.ts', '--grep', 'palette'], { cwd: repo, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the standalone report test failed: its screenshots not updated');
  for (const t of ['light', 'dark']) copyFileSync(join(repo, '.tmp/browser/screenshots', `timeline-${t}.png`), join(repo, 'docs/screenshots', `timeline-${t}.png`));
} finally {
  rmSync(shots, { recursive: true, force: true });
}
