// `prefix-lens fleet` against the stand-in executable.
import assert from 'node:assert/strict';
import { fleetCommand, fleetLines } from '../../../src/cli/fleet.js';
import type { FleetResult } from '../../../src/phux/client.js';
import { FAKE_PHUX } from './helpers.js';

/**
 * Runs the command against the stand-in. A 10 s deadline unless the test sets its own: on a loaded
 * machine the node stand-in can take over the default 1 s to start, and these check what is printed.
 */
async function run(argv: string[], mode: string): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const args = argv.includes('--timeout-ms') ? argv : [...argv, '--timeout-ms', '10000'];
  const code = await fleetCommand(args, (s) => lines.push(s), { env: { PHUX_BIN: '', PHUX_SOCKET: '', FAKE_PHUX_MODE: mode } });
  return { code, lines };
}

describe('prefix-lens fleet', () => {
  it('prints the fleet as a table', async () => {
    const { code, lines } = await run(['--phux-bin', FAKE_PHUX], 'fleet');
    assert.equal(code, 0);
    assert.deepEqual(lines, [
      'TERMINAL  SESSION/WINDOW  AGENT                    STATE    ATTENTION  TITLE',
      '@1        work/window-0   claude (claude)          working  normal     ◐ Refactor auth module',
      '@10       work/window-1   opencode (open_code)     blocked  high       OpenCode',
      '@2        work/window-0   pi (pi)                  idle     none       π - api',
      '@4        ops/window-0    Unknown agent (unknown)  unknown  low        zsh',
      '@7        ops/window-1    Codex (codex)            blocked  high       phux-ask[deploy]:Approve deploy??s=Yes|No',
    ]);
  });

  it('prints --json with state, panes and elapsedMs', async () => {
    const { code, lines } = await run(['fleet', '--json', '--phux-bin', FAKE_PHUX], 'empty');
    assert.equal(code, 0);
    assert.equal(lines.length, 1);
    const doc = JSON.parse(lines[0]);
    assert.deepEqual(Object.keys(doc), ['state', 'panes', 'elapsedMs']);
    assert.deepEqual([doc.state, doc.panes, typeof doc.elapsedMs], ['ok', [], 'number']);
  });

  it('exits 0 with a calm line when phux is not running, not installed, or silent', async () => {
    const noServer = await run(['--phux-bin', FAKE_PHUX], 'no-server');
    assert.equal(noServer.code, 0);
    assert.match(noServer.lines[0], /^phux not running: phux: no server running at /);
    const missing = await run(['--json', '--phux-bin', '/nonexistent/phux'], 'fleet');
    assert.deepEqual([missing.code, JSON.parse(missing.lines[0]).state, JSON.parse(missing.lines[0]).panes], [0, 'not-installed', []]);
    const hang = await run(['--phux-bin', FAKE_PHUX, '--timeout-ms', '300'], 'hang');
    assert.deepEqual([hang.code, hang.lines], [0, ['phux did not answer in 300 ms']]);
  });

  it('reports invalid output with its cause in --json', async () => {
    const { code, lines } = await run(['--json', '--phux-bin', FAKE_PHUX], 'bad-schema');
    const doc = JSON.parse(lines[0]);
    assert.deepEqual([code, doc.state, doc.cause, doc.panes], [0, 'invalid', 'schema', []]);
  });

  it('exits 2 on a usage error', async () => {
    assert.equal((await run(['--bogus'], 'fleet')).code, 2);
    assert.equal((await run(['--timeout-ms', '0'], 'fleet')).code, 2);
  });

  it('strips control characters and escape sequences from untrusted strings in the table', () => {
    const result: FleetResult = {
      state: 'ok',
      panes: [
        {
          terminal: '@1',
          session: 'work\u001b[2J',
          window: 'window-0',
          agent: { id: 'x', label: 'evil\u0007', kind: 'declared' },
          state: 'idle',
          confidence: 1,
          attention: 'none',
          title: '\u001b]0;owned\u0007title\nsecond line\u009b31m',
          cwd: null,
          sources: [],
          explanation: '',
        },
      ],
      document: { schema_version: 1, agents: [] },
      warnings: [],
      elapsedMs: 1,
    };
    const lines = fleetLines(result);
    assert.equal(lines[1], '@1        work [2J/window-0  evil (declared)  idle   none       ]0;owned title second line 31m');
    assert.ok(lines.every((l) => !/[\u0000-\u001f\u007f-\u009f]/.test(l)));
  });
});
