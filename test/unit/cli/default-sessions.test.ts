/**
 * `analyze --all` and `check --all` read the user's own sessions: every session of every host in
 * its default folders (registry discoverSessions, as the Sessions view lists them), newest first;
 * none there is exit 2 naming the folders looked in. No path (or `--examples`) reads the bundled
 * examples (DESIGN "Embedded default": a fresh clone shows a real result).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HOSTS } from '../../../src/hosts/registry.js';
import type { Report } from '../../../src/report/json.js';
import { runCli } from '../../runCli.js';

const PI_DIR = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
const PI_FILE = readdirSync(PI_DIR).find((f) => f.endsWith('.jsonl'))!;
const PI_ID = '01a230ec-991a-7497-9a50-b9f4f6517541';
const CLAUDE_PROJECT = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project';
const CLAUDE_ID = '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6';

/** Every variable a host's default folders follow (HostEntry.locatedBy): unset for the test, so HOME alone decides. */
const LOCATED_BY = [...new Set(HOSTS.flatMap((h) => h.locatedBy ?? []))];

/** Runs `fn` with HOME = `home`, the hosts' variables unset except `vars`; the environment restored after. */
async function withHome<T>(home: string, vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = new Map(['HOME', ...LOCATED_BY, ...Object.keys(vars)].map((k) => [k, process.env[k]]));
  process.env.HOME = home;
  for (const v of LOCATED_BY) delete process.env[v];
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Sets a file's (or each file below a folder's) times to `iso`. */
function touch(path: string, iso: string): void {
  const t = new Date(iso);
  const st = readdirSync(path, { withFileTypes: true, recursive: true });
  for (const e of st) if (e.isFile()) utimesSync(join(e.parentPath, e.name), t, t);
}

describe('analyze and check --all: the hosts\' default folders', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-home-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a HOME with a Pi session and a Claude Code session: both read, newest first (Pi, then Claude Code with its sub-agent)', async () => {
    const home = join(dir, 'home');
    const pi = join(home, '.pi/agent/sessions/--home-user-pi-lab-long-project--');
    mkdirSync(pi, { recursive: true });
    cpSync(join(PI_DIR, PI_FILE), join(pi, PI_FILE));
    const claude = join(home, '.claude/projects/-tmp-prefix-lens-cc-lab-project');
    cpSync(CLAUDE_PROJECT, claude, { recursive: true });
    touch(pi, '2026-12-03T10:00:00Z');
    touch(claude, '2026-12-02T10:00:00Z');
    await withHome(home, {}, async () => {
      const json = await runCli(['analyze', '--all', '--json', '--no-cache']);
      assert.equal(json.code, 0, json.err);
      assert.equal(json.err, '');
      const report = JSON.parse(json.out) as Report;
      assert.deepEqual(
        report.sessions.map((s) => [s.host, s.id, s.requests.length, s.path]),
        [
          ['pi', PI_ID, 8, join(pi, PI_FILE)],
          ['claude-code', CLAUDE_ID, 12, join(claude, `${CLAUDE_ID}.jsonl`)],
          ['claude-code', 'aa4455826cc83258f', 1, join(claude, CLAUDE_ID, 'subagents/agent-aa4455826cc83258f.jsonl')],
        ],
      );
      // check reads the same sessions: the Pi session's system-prompt break and Claude Code's #9 fail the gate.
      const check = await runCli(['check', '--all', '--no-cache']);
      assert.equal(check.code, 1, check.err);
      assert.deepEqual([check.outLines, check.err], [
        [
          `${join(pi, PI_FILE)}:11: pi session ${PI_ID} request #4 breaks the cache (system-changed): ~1616 tokens re-billed, $0.00558`,
          `${join(claude, `${CLAUDE_ID}.jsonl`)}:113: claude-code session ${CLAUDE_ID} request #9 breaks the cache (history-rewritten, system-changed): ~19213 tokens re-billed, $0.06628`,
          '2 requests break the cache',
        ],
        '',
      ]);
    });
    // Newest first: the Claude Code session written later comes first.
    touch(claude, '2026-12-04T10:00:00Z');
    await withHome(home, {}, async () => {
      const report = JSON.parse((await runCli(['analyze', '--all', '--json', '--no-cache'])).out) as Report;
      assert.deepEqual(report.sessions.map((s) => s.id), [CLAUDE_ID, 'aa4455826cc83258f', PI_ID]);
    });
  });

  it("the hosts' variables move the folders: a Pi session in $PI_CODING_AGENT_SESSION_DIR, none in HOME", async () => {
    const flat = join(dir, 'pi-sessions');
    mkdirSync(flat);
    cpSync(join(PI_DIR, PI_FILE), join(flat, PI_FILE));
    mkdirSync(join(dir, 'home'));
    await withHome(join(dir, 'home'), { PI_CODING_AGENT_SESSION_DIR: flat }, async () => {
      const r = await runCli(['analyze', '--all', '--json', '--no-cache']);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual((JSON.parse(r.out) as Report).sessions.map((s) => [s.host, s.id, s.path]), [['pi', PI_ID, join(flat, PI_FILE)]]);
    });
  });

  it('an empty HOME: exit 2, nothing on stdout, each host\'s folders named with the variables that move them, and the ways on', async () => {
    const home = join(dir, 'home');
    mkdirSync(home);
    for (const command of ['analyze', 'check']) {
      const r = await withHome(home, {}, () => runCli([command, '--all']));
      assert.deepEqual([r.code, r.out], [2, ''], command);
      assert.deepEqual(r.err.split('\n'), [
        "prefix-lens: no sessions found in the hosts' default folders:",
        `  BotHarness (DSH): ${home}/.dsh/sessions (DSH_HOME sets where to look)`,
        `  Claude Code: ${home}/.claude/projects, ${home}/.config/claude/projects (CLAUDE_CONFIG_DIR sets where to look)`,
        `  Codex: ${home}/.codex/sessions, ${home}/.codex/archived_sessions (CODEX_HOME sets where to look)`,
        `  PI-Desktop: ${home}/.pi-desktop/sessions (PI_DESKTOP_DATA_DIR sets where to look)`,
        `  Pi: ${home}/.pi/agent/sessions (PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR set where to look)`,
        `  OpenCode: ${home}/.local/share/opencode (XDG_DATA_HOME, OPENCODE_DB set where to look)`,
        `To read other sessions, name them: prefix-lens ${command} <path | host:id>…`,
        `To read the bundled example sessions: prefix-lens ${command} (no path)`,
      ], command);
    }
    // --html: no report file is left behind by a run that found nothing.
    const file = join(dir, 'r.html');
    assert.equal((await withHome(home, {}, () => runCli(['analyze', '--all', '--html', file]))).code, 2);
    assert.deepEqual(readdirSync(dir), ['home']);
  });
});

describe('no path and --examples: the bundled example sessions', () => {
  it('read examples/index.json: its inputs in order, each with its request bodies, byte for byte', async () => {
    const { examples } = JSON.parse(readFileSync('examples/index.json', 'utf8')) as { examples: Array<{ path: string; requests?: string }> };
    const sessions: Report['sessions'] = [];
    for (const e of examples) {
      const r = await runCli(['analyze', '--json', '--no-cache', resolve(e.path), ...(e.requests ? ['--requests', resolve(e.requests)] : [])]);
      assert.equal(r.code, 0, r.err);
      sessions.push(...(JSON.parse(r.out) as Report).sessions);
    }
    for (const args of [['--examples'], []]) {
      const all = await runCli(['analyze', '--json', '--no-cache', ...args]);
      assert.equal(all.code, 0, all.err);
      assert.equal(all.out, JSON.stringify({ version: 1, sessions }, null, 2), args.join(' '));
    }
    assert.deepEqual(
      sessions.map((s) => [s.host, s.requests.length]),
      [['pi', 16], ['pi', 8], ['opencode', 7], ['opencode', 6], ['opencode', 1], ['opencode', 10], ['opencode', 9], ['opencode', 6], ['claude-code', 12], ['claude-code', 1], ['codex', 9]],
    );
  });
});
