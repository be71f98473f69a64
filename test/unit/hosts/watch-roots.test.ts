import assert from 'node:assert/strict';
import { join } from 'node:path';
import { watchRootsAdding } from '../../../src/hosts/registry.js';

describe('watch roots when settings add folders (the extension Sessions view)', () => {
  const home = '/home/u';
  const env = {};
  const defaults = [
    join(home, '.pi/agent/sessions'),
    join(home, '.local/share/opencode'),
    join(home, '.claude/projects'),
    join(home, '.config/claude/projects'),
    join(home, '.codex/sessions'),
    join(home, '.codex/archived_sessions'),
    join(home, '.dsh/sessions'),
    join(home, '.pi-desktop/sessions'),
  ];

  it("keeps every host's default folders when a host's list of extra folders is empty", () => {
    // The extension always sets each host's list; [] used to replace the OpenCode and capture defaults.
    const roots = watchRootsAdding({ env, home, paths: { pi: [], opencode: [], capture: [], 'claude-code': [], codex: [] } });
    assert.deepEqual([...roots].sort(), [...defaults].sort());
  });

  it('adds the configured folders of each host after its defaults, deduplicated', () => {
    const roots = watchRootsAdding({
      env: { PI_CODING_AGENT_SESSION_DIR: '/flat' },
      home,
      paths: { pi: ['/more/pi', join(home, '.pi/agent/sessions')], 'claude-code': ['/work/claude'], capture: ['/caps'] },
    });
    const at = roots.indexOf(join(home, '.pi/agent/sessions'));
    assert.deepEqual(roots.slice(at, at + 3), [join(home, '.pi/agent/sessions'), '/flat', '/more/pi']);
    for (const r of ['/work/claude', '/caps', join(home, '.claude/projects')]) assert.ok(roots.includes(r), r);
    assert.equal(roots.length, new Set(roots).size);
    assert.equal(roots.length, defaults.length + 4);
  });
});
