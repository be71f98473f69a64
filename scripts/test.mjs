// Runs every suite and ends with ONE plain line "N passed, N failed" summing them all:
//   unit      mocha over the recorded fixtures and the standalone report in chromium (.mocharc.json)
//   vscode    mocha inside VS Code's real extension host (code-server), trusted workspace
//   restricted  the same, in an untrusted workspace (restricted mode)
//   e2e       the workbench in chromium: command palette, Sessions view, Timeline webview, screenshots
//   installed the VSIX (`npm run package` on a clean copy) installed into code-server, no development
//             path: the e2e Timeline smoke path (light theme) and test/installed against that copy
// The VS Code suites need code-server + Node 24 + chromium: scripts/vscode/setup-env.sh prepares
// them once into a cache folder. A suite that cannot run at all counts as one failure.
//   node scripts/test.mjs [--only=unit,vscode,restricted,e2e,installed] [mocha args for the unit suite…]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ensureChromium } from './ensure-chromium.mjs';
import { packageVsix } from './vsix/vsix.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const only = argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const mochaArgs = argv.filter((a) => !a.startsWith('--only='));
const want = (s) => !only || only.includes(s);
const scratch = mkdtempSync(join(tmpdir(), 'prefix-lens-test-'));
const results = [];

/** Records a suite's counts from its JSON results file (absent = the suite did not run: 1 failure). */
function collect(name, file, note) {
  if (existsSync(file)) {
    const r = JSON.parse(readFileSync(file, 'utf8'));
    results.push({ name, ...r });
    console.log(`== ${name}: ${r.passed} passing, ${r.failed} failing${r.skipped ? `, ${r.skipped} pending` : ''}`);
  } else {
    results.push({ name, passed: 0, failed: 1, failures: [{ title: `${name} suite`, error: note ?? 'did not run' }] });
    console.log(`== ${name}: could not run (${note ?? 'no results'}), counted as 1 failure`);
  }
}

// The unit suite's browser tests (test/browser) and the VS Code suites drive Debian's Chromium.
ensureChromium();

try {
  if (want('unit')) {
    console.log('== unit suite (mocha)');
    const file = join(scratch, 'unit.json');
    spawnSync('npx', ['mocha', ...mochaArgs], { stdio: 'inherit', cwd: repo, env: { ...process.env, PREFIX_LENS_RESULTS: file } });
    collect('unit', file);
  }

  const vscodeSuites = ['vscode', 'restricted', 'e2e', 'installed'].filter(want);
  // `npm test` builds dist/ before this script; a run with --only= did not, and the VS Code suites
  // load the extension from dist/ (a stale bundle would be tested).
  if (vscodeSuites.length && only) execFileSync(process.execPath, [join(repo, 'scripts/build.mjs')], { stdio: 'inherit', cwd: repo });
  if (vscodeSuites.length) {
    let envDir;
    try {
      console.log('== preparing VS Code for the extension tests (scripts/vscode/setup-env.sh: chromium, Node 24, code-server 4.139.1; once, cached)');
      envDir = execFileSync('bash', [join(repo, 'scripts/vscode/setup-env.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim().split('\n').pop();
      console.log(`   ready in ${envDir}`);
    } catch (e) {
      for (const s of vscodeSuites) collect(s, join(scratch, 'none'), `setup failed: ${e.message}`);
    }
    if (envDir) {
      if (want('vscode')) {
        const fx = prepareFixtures('vscode');
        await runHostSuite('vscode', 'main', envDir, fx, { trusted: true, workspace: fx.workspace });
      }
      if (want('restricted')) {
        const fx = prepareFixtures('restricted');
        await runHostSuite('restricted', 'restricted', envDir, fx, { trusted: false, workspace: fx.untrustedWorkspace });
      }
      if (want('e2e')) {
        const fx = prepareFixtures('e2e');
        console.log('== e2e suite (workbench in chromium)');
        const file = join(scratch, 'e2e.json');
        spawnSync('npx', ['mocha', '--config', 'test/e2e/.mocharc.json'], {
          stdio: 'inherit',
          cwd: repo,
          env: { ...process.env, PREFIX_LENS_RESULTS: file, PREFIX_LENS_VSCODE_ENV_DIR: envDir, PREFIX_LENS_FIXTURE_HOME: fx.home, PREFIX_LENS_TEST_TMP: fx.tmp, PREFIX_LENS_WORKSPACE: fx.workspace },
        });
        collect('e2e', file);
      }
      if (want('installed')) {
        const fx = prepareFixtures('installed');
        console.log('== installed suite (the built VSIX installed into code-server, no development path)');
        const file = join(scratch, 'installed.json');
        const vsix = join(scratch, 'prefix-lens.vsix');
        let note;
        try {
          packageVsix(repo, vsix);
          console.log(`   packaged ${vsix} (${statSync(vsix).size} bytes)`);
        } catch (e) {
          note = `packaging failed: ${e.message}`;
        }
        if (!note) {
          spawnSync('npx', ['mocha', '--config', 'test/installed/.mocharc.json'], {
            stdio: 'inherit',
            cwd: repo,
            env: { ...process.env, PREFIX_LENS_RESULTS: file, PREFIX_LENS_VSCODE_ENV_DIR: envDir, PREFIX_LENS_FIXTURE_HOME: fx.home, PREFIX_LENS_TEST_TMP: fx.tmp, PREFIX_LENS_WORKSPACE: fx.workspace, PREFIX_LENS_VSIX: vsix, PREFIX_LENS_SCREENSHOTS_DIR: process.env.PREFIX_LENS_SCREENSHOTS_DIR ? resolve(repo, process.env.PREFIX_LENS_SCREENSHOTS_DIR) : join(fx.tmp, 'screenshots') },
          });
        }
        collect('installed', file, note);
      }
    }
  }
} finally {
  if (!process.env.PREFIX_LENS_KEEP_STATE) rmSync(scratch, { recursive: true, force: true });
}

for (const r of results) for (const f of r.failures ?? []) console.log(`FAILED [${r.name}] ${f.title}: ${f.error}`);
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed || !results.length ? 1 : 0);

/**
 * A fixture HOME holding the recorded sessions where the hosts keep them (Pi's agent dir, OpenCode's
 * data dir, ~/.claude, ~/.codex, ~/.pi-desktop), a trusted workspace, and an untrusted one whose workspace settings try to add a folder.
 */
function prepareFixtures(name) {
  const root = join(scratch, name);
  const tmp = join(root, 'tmp');
  const home = join(root, 'home');
  mkdirSync(tmp, { recursive: true });
  for (const s of ['main', 'long']) {
    const base = join(repo, 'test/fixtures/pi', s, 'agent/sessions');
    for (const dir of readdir(base)) {
      mkdirSync(join(home, '.pi/agent/sessions', dir), { recursive: true });
      for (const f of readdir(join(base, dir))) copyFileSync(join(base, dir, f), join(home, '.pi/agent/sessions', dir, f));
    }
  }
  mkdirSync(join(home, '.local/share/opencode'), { recursive: true });
  copyFileSync(join(repo, 'test/fixtures/opencode/opencode.db'), join(home, '.local/share/opencode/opencode.db'));
  // Claude Code (~/.claude), Codex (~/.codex) and PI-Desktop (~/.pi-desktop) where each keeps its data.
  cpSync(join(repo, 'test/fixtures/claude-code/claude'), join(home, '.claude'), { recursive: true });
  cpSync(join(repo, 'test/fixtures/codex/codex'), join(home, '.codex'), { recursive: true });
  cpSync(join(repo, 'test/fixtures/pi-desktop/home'), join(home, '.pi-desktop'), { recursive: true });
  const workspace = join(root, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'README.md'), '# Prefix Lens test workspace\n');
  const untrustedWorkspace = join(root, 'untrusted-workspace');
  mkdirSync(join(untrustedWorkspace, '.vscode'), { recursive: true });
  mkdirSync(join(tmp, 'workspace-sessions'), { recursive: true });
  copyFileSync(join(home, '.pi/agent/sessions/--home-user-pi-lab-long-project--', readdir(join(home, '.pi/agent/sessions/--home-user-pi-lab-long-project--'))[0]), join(tmp, 'workspace-sessions/extra.jsonl'));
  writeFileSync(join(untrustedWorkspace, '.vscode/settings.json'), JSON.stringify({ 'prefixLens.sessionFolders.pi': [join(tmp, 'workspace-sessions')] }));
  return { tmp, home, workspace, untrustedWorkspace };
}

function readdir(d) {
  return execFileSync('ls', ['-1', d], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** Bundles test/vscode (runner + one suite per mode) and runs it in the extension host. */
async function runHostSuite(name, suite, envDir, fx, o) {
  console.log(`== ${name} suite (mocha in VS Code's extension host${o.trusted ? '' : ', untrusted workspace'})`);
  const out = join(repo, 'out/test/vscode');
  await build({
    entryPoints: { index: 'test/vscode/index.ts', main: 'test/vscode/main.ts', restricted: 'test/vscode/restricted.ts' },
    outdir: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
    absWorkingDir: repo,
  });
  const file = join(scratch, `${name}.json`);
  const { runExtensionHostSuite } = await import('./vscode/runExtensionHost.mjs');
  let note;
  try {
    await runExtensionHostSuite({
      envDir,
      extDir: repo,
      testsEntry: join(out, 'index.js'),
      workspace: o.workspace,
      home: fx.home,
      trusted: o.trusted,
      env: {
        PREFIX_LENS_TEST_RESULTS: file,
        PREFIX_LENS_TEST_SUITE: suite,
        PREFIX_LENS_TEST_HOME: fx.home,
        PREFIX_LENS_REPO: repo,
        PREFIX_LENS_TEST_TMP: fx.tmp,
        ...(process.env.PREFIX_LENS_TEST_GREP ? { PREFIX_LENS_TEST_GREP: process.env.PREFIX_LENS_TEST_GREP } : {}),
        FAKE_PHUX_PID_FILE: join(fx.tmp, 'fake-phux.pid'),
      },
      settings: { 'prefixLens.phux.path': join(repo, 'test/fixtures/phux/fake-phux.mjs') },
    });
  } catch (e) {
    note = e.message;
  }
  collect(name, file, note);
}
