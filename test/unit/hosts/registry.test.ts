import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { HOSTS, discoverSessions, hostOf, findSessions, openRef, releaseReaders, resolveArg } from '../../../src/hosts/registry.js';
import { sessionReport } from '../../../src/report/json.js';

const MAIN_ID = '01a230ec-9a4e-7417-8af1-68d34234bdc8';
const LONG_ID = '01a230ec-991a-7497-9a50-b9f4f6517541';
const OC = JSON.parse(readFileSync('test/fixtures/opencode/sessions.json', 'utf8')) as { sessions: Record<string, string>; children: Record<string, string> };
const report = (s: Session) => JSON.stringify(sessionReport(analyzeSession(s)));

describe('host registry', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-registry-'))));
  after(() => {
    releaseReaders();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every host once, each with the same shape', () => {
    assert.deepEqual(HOSTS.map((h) => h.id), ['botharness', 'claude-code', 'codex', 'pi-desktop', 'pi', 'opencode', 'capture']);
    for (const h of HOSTS) for (const f of ['discover', 'refsAt', 'open', 'watchRoots'] as const) assert.equal(typeof h[f], 'function', `${h.id}.${f}`);
  });

  it("finds Pi sessions from the agent dir, its sessions/ folder, or any folder above (the old reader said 'no sessions found')", async () => {
    for (const p of ['test/fixtures/pi/main/agent', 'test/fixtures/pi/main/agent/sessions', 'test/fixtures/pi/main']) {
      const refs = await findSessions(p);
      assert.deepEqual(refs.map((r) => [r.host, r.id, r.project]), [['pi', MAIN_ID, '/home/user/pi-lab/main/project']], p);
    }
    const both = await findSessions('test/fixtures/pi');
    assert.deepEqual(both.map((r) => r.id), [LONG_ID, MAIN_ID]);
    // The recorder's requests/ folders beside the transcripts are not sessions of their own.
    assert.ok(both.every((r) => r.host === 'pi'));
    const main = both[1];
    assert.equal(main.key, main.path);
    assert.equal(main.firstPrompt, 'Hello pi. Say hi.');
    assert.equal(main.size, statSync(main.path).size);
  });

  it('opening a Pi ref gives the same analysis as reading the file directly', async () => {
    for (const ref of await findSessions('test/fixtures/pi')) {
      const [viaRef] = await openRef(ref);
      assert.equal(report(viaRef), report(await readPiSession(ref.path)));
    }
  });

  it('a walk skips .jsonl files of other tools (first line JSON, not a Pi header) but reports damaged ones', async () => {
    const d = join(dir, 'mixed', 'deep', 'er');
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'claude.jsonl'), '{"type":"summary","summary":"x"}\n');
    writeFileSync(join(d, 'damaged.jsonl'), 'not json\n');
    mkdirSync(join(dir, 'mixed', 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(dir, 'mixed', 'node_modules', 'x', 'a.jsonl'), 'not json\n');
    const refs = await findSessions(join(dir, 'mixed'));
    assert.deepEqual(refs.map((r) => [r.host, r.id]), [['pi', 'damaged']]);
    // Named directly, a foreign .jsonl is still read (and its problems shown as diagnostics).
    assert.equal((await findSessions(join(d, 'claude.jsonl'))).length, 1);
    await assert.rejects(findSessions(join(dir, 'missing')), /missing: no such file or directory/);
    // Not "no such file or directory" for a path that exists but cannot be followed.
    symlinkSync('loop-b', join(dir, 'loop-a'));
    symlinkSync('loop-a', join(dir, 'loop-b'));
    await assert.rejects(findSessions(join(dir, 'loop-a')), /loop-a: a loop of symbolic links/);
    await assert.rejects(findSessions(join(d, 'damaged.jsonl', 'x')), /x: a part of the path is a file, not a folder/);
    symlinkSync(join(dir, 'gone.jsonl'), join(dir, 'dangling.jsonl'));
    await assert.rejects(findSessions(join(dir, 'dangling.jsonl')), { message: `${join(dir, 'dangling.jsonl')}: a symbolic link to ${join(dir, 'gone.jsonl')}, which does not exist` });
  });

  it('finds every OpenCode session of a data dir or database, child sessions with their parent', async () => {
    const refs = await findSessions('test/fixtures/opencode');
    const ids = Object.values(OC.sessions);
    const child = Object.keys(OC.children)[0];
    assert.deepEqual(refs.map((r) => r.id).sort(), [...ids, child].sort());
    assert.ok(refs.every((r) => r.key === `opencode:${r.id}` && r.path.endsWith('opencode.db') && r.stamp && r.project?.startsWith('/tmp/prefix-lens-opencode-lab/proj')));
    assert.equal(refs.find((r) => r.id === child)?.parentId, OC.children[child]);
    assert.deepEqual((await findSessions('test/fixtures/opencode/opencode.db')).map((r) => r.key), refs.map((r) => r.key));
  });

  it('opening one OpenCode ref reads only that session, with results identical to reading the whole store', async () => {
    for (const db of ['test/fixtures/opencode/opencode.db', 'test/fixtures/opencode/wal/opencode.db']) {
      const whole = new Map((await readOpenCode(db)).map((s) => [s.id, report(s)] as const));
      const refs = await findSessions(db);
      assert.equal(refs.length, whole.size, db);
      for (const ref of refs) {
        const sessions = await openRef(ref);
        assert.deepEqual(sessions.map((s) => s.id), [ref.id]);
        assert.equal(report(sessions[0]), whole.get(ref.id), `${db} ${ref.id}`);
      }
    }
  });

  it("discovers every host's default locations, newest first; paths override them per host", async () => {
    const env = { PI_CODING_AGENT_DIR: 'test/fixtures/pi/main/agent', OPENCODE_DB: resolve('test/fixtures/opencode/opencode.db') };
    const all = await discoverSessions({ env, home: join(dir, 'nohome') });
    assert.equal(all.filter((r) => r.host === 'pi').length, 1);
    assert.equal(all.filter((r) => r.host === 'opencode').length, 6);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].mtimeMs >= all[i].mtimeMs);
    const only = await discoverSessions({ env: {}, home: join(dir, 'nohome'), paths: { pi: ['test/fixtures/pi'], opencode: [] } });
    assert.deepEqual(only.map((r) => r.id).sort(), [LONG_ID, MAIN_ID]);
    assert.deepEqual(hostOf('pi').watchRoots({ env, home: '/h' }), [join('test/fixtures/pi/main/agent', 'sessions')]);
  });

  it('resolves pi:<prefix>, pi: (newest) and opencode:<id> in the default locations', async () => {
    const saved = { ...process.env };
    const env = { PI_CODING_AGENT_DIR: 'test/fixtures/pi/long/agent', OPENCODE_DB: resolve('test/fixtures/opencode/opencode.db') };
    try {
      assert.deepEqual((await resolveArg('pi:01a230ec-991a', { env, home: '/h' })).map((r) => r.id), [LONG_ID]);
      assert.deepEqual((await resolveArg('pi:', { env, home: '/h' })).map((r) => r.id), [LONG_ID]);
      assert.deepEqual((await resolveArg('pi:zzz', { env, home: '/h' })), []);
      assert.deepEqual((await resolveArg(`opencode:${OC.sessions.basic}`, { env, home: '/h' })).map((r) => r.key), [`opencode:${OC.sessions.basic}`]);
      // An id prefix, as for the other hosts: unique → that session; shared → every session it starts.
      assert.deepEqual((await resolveArg(`opencode:${OC.sessions.basic.slice(0, 11)}`, { env, home: '/h' })).map((r) => r.id), [OC.sessions.basic]);
      assert.deepEqual((await resolveArg('opencode:ses_dcf11', { env, home: '/h' })).map((r) => r.id).sort(), [OC.sessions.phuxV2, OC.sessions.phuxV1].sort());
      assert.deepEqual(await resolveArg('opencode:ses_zzz', { env, home: '/h' }), []);
    } finally {
      process.env = saved;
    }
  });

  it('lists 2,000 session files from metadata and header reads', async () => {
    const root = join(dir, 'many', 'sessions');
    const src = readdirSync('test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--')[0];
    for (let p = 0; p < 20; p++) {
      const d = join(root, `--work-p${p}--`);
      mkdirSync(d, { recursive: true });
      for (let i = 0; i < 100; i++) {
        const f = join(d, `s${i}.jsonl`);
        if (i === 0) cpSync(join('test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--', src), f);
        else writeFileSync(f, `${JSON.stringify({ type: 'session', version: 3, id: `id-${p}-${i}`, cwd: `/work/p${p}` })}\n`);
      }
    }
    const refs = await discoverSessions({ env: { PI_CODING_AGENT_DIR: join(dir, 'many') }, home: '/h', paths: {} });
    assert.equal(refs.length, 2000);
    assert.equal(new Set(refs.map((r) => r.key)).size, 2000);
    assert.equal(refs.filter((r) => r.id === LONG_ID).length, 20);
    assert.equal(refs.find((r) => r.id === 'id-7-3')?.project, '/work/p7');
  });
});
