/**
 * A `<host>:<id prefix>` argument that matches no session (`opencode:`, `pi:`, `claude:`, `codex:`,
 * `pidesktop:`, `botharness:`, with or without a prefix) prints one line on stderr naming the
 * folders searched and the variables that move them, nothing on stdout, and exits 2 (as a path
 * with no sessions does). `opencode:` with no OpenCode data printed a made-up "opencode session
 * opencode" block with an empty table; `claude:zz` said only "no session with that id prefix".
 * A damaged OpenCode database is still read and its damage reported.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from '../../runCli.js';
import type { Report } from '../../../src/report/json.js';
import { noSessionText } from '../../../src/hosts/registry.js';

/** Variables the hosts locate their folders with; each test sets the ones it needs. */
const VARS = ['HOME', 'XDG_DATA_HOME', 'OPENCODE_DB', 'PI_CODING_AGENT_DIR', 'PI_CODING_AGENT_SESSION_DIR', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'PI_DESKTOP_DATA_DIR', 'DSH_HOME'];
const FIXTURES = resolve('test/fixtures');

describe('a host:prefix argument that matches no session', () => {
  let home: string;
  const saved = new Map<string, string | undefined>();
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'prefix-lens-emptyhome-'));
    for (const v of VARS) saved.set(v, process.env[v]);
  });
  // Every host's folder under one empty home, through its own variable (os.homedir() may not
  // follow process.env.HOME once another test replaced process.env).
  beforeEach(() => {
    for (const v of VARS) delete process.env[v];
    Object.assign(process.env, {
      HOME: home,
      XDG_DATA_HOME: join(home, 'data'),
      PI_CODING_AGENT_DIR: join(home, 'pi-agent'),
      CLAUDE_CONFIG_DIR: join(home, 'claude'),
      CODEX_HOME: join(home, 'codex'),
      PI_DESKTOP_DATA_DIR: join(home, 'pi-desktop'),
      DSH_HOME: join(home, 'dsh'),
    });
  });
  after(() => {
    for (const [v, x] of saved) {
      if (x === undefined) delete process.env[v];
      else process.env[v] = x;
    }
    rmSync(home, { recursive: true, force: true });
  });

  const empty: Array<[string, string]> = [
    ['opencode:', 'opencode: no OpenCode session in ~/data/opencode (XDG_DATA_HOME, OPENCODE_DB set where to look)'],
    ['pi:', 'pi: no Pi session in ~/pi-agent/sessions (PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR set where to look)'],
    ['claude:', 'claude: no Claude Code session in ~/claude/projects (CLAUDE_CONFIG_DIR sets where to look)'],
    ['codex:', 'codex: no Codex session in ~/codex/sessions, ~/codex/archived_sessions (CODEX_HOME sets where to look)'],
    ['pidesktop:', 'pidesktop: no PI-Desktop session in ~/pi-desktop/sessions (PI_DESKTOP_DATA_DIR sets where to look)'],
    ['botharness:', 'botharness: no BotHarness (DSH) session in ~/dsh/sessions (DSH_HOME sets where to look)'],
    ['claude:8aa2', 'claude:8aa2: no Claude Code session whose id starts with "8aa2" in ~/claude/projects (CLAUDE_CONFIG_DIR sets where to look)'],
  ];
  for (const [arg, line] of empty) {
    it(`${arg} with empty folders: analyze says where it looked on stderr, nothing on stdout, exit 2; --json has no session; check exits 2`, async () => {
      const expected = `prefix-lens: ${line.replaceAll('~', home)}`;
      const text = await runCli(['analyze', arg, '--no-cache']);
      assert.deepEqual([text.code, text.out, text.err], [2, '', expected]);
      const json = await runCli(['analyze', arg, '--json', '--no-cache']);
      assert.equal(json.code, 2);
      assert.deepEqual(JSON.parse(json.out) as Report, { version: 1, sessions: [] });
      assert.equal(json.err, expected);
      const check = await runCli(['check', arg, '--no-cache']);
      assert.deepEqual([check.code, check.err], [2, `${expected}\nprefix-lens: 1 input could not be read or held no session`]);
    });
  }

  it('without the variables, the default folders under the home are named', async () => {
    const say = (arg: string) => noSessionText(arg, { env: {}, home: '/nohome' });
    assert.deepEqual(await Promise.all(['opencode:', 'pi:', 'claude:', 'codex:', 'pidesktop:', 'pi-desktop:', 'botharness:', 'claude-code:x', '/some/path'].map(say)), [
      'opencode: no OpenCode session in /nohome/.local/share/opencode (XDG_DATA_HOME, OPENCODE_DB set where to look)',
      'pi: no Pi session in /nohome/.pi/agent/sessions (PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR set where to look)',
      'claude: no Claude Code session in /nohome/.claude/projects, /nohome/.config/claude/projects (CLAUDE_CONFIG_DIR sets where to look)',
      'codex: no Codex session in /nohome/.codex/sessions, /nohome/.codex/archived_sessions (CODEX_HOME sets where to look)',
      'pidesktop: no PI-Desktop session in /nohome/.pi-desktop/sessions (PI_DESKTOP_DATA_DIR sets where to look)',
      'pi-desktop: no PI-Desktop session in /nohome/.pi-desktop/sessions (PI_DESKTOP_DATA_DIR sets where to look)',
      'botharness: no BotHarness (DSH) session in /nohome/.dsh/sessions (DSH_HOME sets where to look)',
      'claude-code:x: no Claude Code session whose id starts with "x" in /nohome/.claude/projects, /nohome/.config/claude/projects (CLAUDE_CONFIG_DIR sets where to look)',
      null,
    ]);
  });

  it('a prefix no session of the recorded data has: the line counts the sessions that are there', async () => {
    process.env.XDG_DATA_HOME = FIXTURES;
    const oc = await runCli(['analyze', 'opencode:ses_zzz', '--no-cache']);
    assert.deepEqual([oc.code, oc.out, oc.err], [2, '', `prefix-lens: opencode:ses_zzz: no OpenCode session whose id starts with "ses_zzz" in ${FIXTURES}/opencode (6 sessions there; XDG_DATA_HOME, OPENCODE_DB set where to look)`]);
    process.env.PI_CODING_AGENT_DIR = join(FIXTURES, 'pi/main/agent');
    const pi = await runCli(['analyze', 'pi:zz', '--no-cache']);
    assert.deepEqual([pi.code, pi.out, pi.err], [2, '', `prefix-lens: pi:zz: no Pi session whose id starts with "zz" in ${FIXTURES}/pi/main/agent/sessions (1 session there; PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR set where to look)`]);
  });

  it('--watch says the same before "no sessions found"', async () => {
    const r = await runCli(['analyze', '--watch', 'codex:']);
    assert.deepEqual([r.code, r.err], [2, `prefix-lens: codex: no Codex session in ${home}/codex/sessions, ${home}/codex/archived_sessions (CODEX_HOME sets where to look)\nprefix-lens: --watch: no sessions found`]);
  });

  it('opencode: with a damaged database still reads it and reports the damage (exit 2)', async () => {
    const data = join(home, 'damaged');
    mkdirSync(join(data, 'opencode'), { recursive: true });
    writeFileSync(join(data, 'opencode', 'opencode.db'), 'garbage\n');
    process.env.XDG_DATA_HOME = data;
    const r = await runCli(['analyze', 'opencode:', '--json', '--no-cache']);
    assert.equal(r.code, 2);
    const db = join(data, 'opencode', 'opencode.db');
    assert.deepEqual((JSON.parse(r.out) as Report).sessions.map((s) => [s.id, s.diagnostics.map((d) => d.message)]), [
      ['opencode.db', ['not an SQLite database (bad header; a half-written or foreign file)', 'no sessions could be read']],
    ]);
    // --json carries the diagnostics; stderr stays empty (as for any session read with damage).
    assert.equal(r.err, '');
    const text = await runCli(['analyze', 'opencode:', '--no-cache']);
    assert.equal(text.code, 2);
    assert.ok(text.outLines.includes(`  error: ${db}: not an SQLite database (bad header; a half-written or foreign file)`), text.out);
  });
});
