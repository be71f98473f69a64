import assert from 'node:assert/strict';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeCwdDir, locatePiSessions, piAgentDir } from '../../../src/hosts/pi/index.js';
import { cleanup, tempDir } from './helpers.js';

const header = (id: string, cwd: string) => `${JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-11-29T10:00:00.000Z', cwd })}\n`;

describe('pi locate', () => {
  let home: string;
  before(async () => (home = await tempDir('pi-home-')));
  after(async () => cleanup(home));

  it('agent dir: $PI_CODING_AGENT_DIR (with ~ expansion) or ~/.pi/agent', () => {
    assert.equal(piAgentDir({}, '/h'), join('/h', '.pi', 'agent'));
    assert.equal(piAgentDir({ PI_CODING_AGENT_DIR: '/x/agent' }, '/h'), '/x/agent');
    assert.equal(piAgentDir({ PI_CODING_AGENT_DIR: '~/alt' }, '/h'), join('/h', 'alt'));
  });

  it('decodes --<cwd>-- folder names (lossy: every "-" becomes "/")', () => {
    assert.equal(decodeCwdDir('--home-dev-project--'), '/home/dev/project');
    assert.equal(decodeCwdDir('project'), undefined);
  });

  it('finds sessions/--<cwd>--/*.jsonl under a temp PI_CODING_AGENT_DIR, cwd from the header, newest first', async () => {
    const agent = join(home, 'agent');
    const a = join(agent, 'sessions', '--work-alpha--');
    const b = join(agent, 'sessions', '--work-beta--');
    await mkdir(a, { recursive: true });
    await mkdir(b, { recursive: true });
    await writeFile(join(a, '2026-11-29T10-00-00-000Z_aaa.jsonl'), header('aaa', '/work/alpha'));
    await writeFile(join(b, '2026-11-29T11-00-00-000Z_bbb.jsonl'), header('bbb', '/work/beta'));
    await writeFile(join(b, 'broken.jsonl'), '{not json');
    await writeFile(join(b, 'notes.txt'), 'ignored');
    await utimes(join(a, '2026-11-29T10-00-00-000Z_aaa.jsonl'), new Date('2026-11-29T10:00:00Z'), new Date('2026-11-29T10:00:00Z'));
    await utimes(join(b, '2026-11-29T11-00-00-000Z_bbb.jsonl'), new Date('2026-11-29T11:00:00Z'), new Date('2026-11-29T11:00:00Z'));
    await utimes(join(b, 'broken.jsonl'), new Date('2026-11-29T09:00:00Z'), new Date('2026-11-29T09:00:00Z'));

    const found = await locatePiSessions({ PI_CODING_AGENT_DIR: agent }, home);
    assert.deepEqual(
      found.map((f) => [f.file, f.origin, f.id, f.cwd, f.cwdFromDir]),
      [
        [join(b, '2026-11-29T11-00-00-000Z_bbb.jsonl'), 'agent-dir', 'bbb', '/work/beta', undefined],
        [join(a, '2026-11-29T10-00-00-000Z_aaa.jsonl'), 'agent-dir', 'aaa', '/work/alpha', undefined],
        // no readable header: id from the file name (not Pi's `<time>_<id>`: its stem), cwd decoded from the folder name
        [join(b, 'broken.jsonl'), 'agent-dir', 'broken', undefined, '/work/beta'],
      ],
    );
  });

  it('PI_CODING_AGENT_SESSION_DIR is a flat folder, listed in addition to the default tree', async () => {
    const flat = join(home, 'flat');
    await mkdir(flat, { recursive: true });
    await writeFile(join(flat, 's1.jsonl'), header('s1', '/work/gamma'));
    await mkdir(join(flat, 'sub'), { recursive: true });
    await writeFile(join(flat, 'sub', 'nested.jsonl'), header('nested', '/x'));
    const found = await locatePiSessions({ PI_CODING_AGENT_SESSION_DIR: flat, PI_CODING_AGENT_DIR: join(home, 'agent') }, home);
    const flatOnes = found.filter((f) => f.origin === 'session-dir');
    assert.deepEqual(
      flatOnes.map((f) => [f.file, f.cwd]),
      [[join(flat, 's1.jsonl'), '/work/gamma']],
    );
    assert.equal(found.filter((f) => f.origin === 'agent-dir').length, 3);
  });

  it('missing directories yield nothing', async () => {
    assert.deepEqual(await locatePiSessions({}, join(home, 'nobody')), []);
  });
});
