/**
 * PI-Desktop through the host registry: discovery in `$PI_DESKTOP_DATA_DIR` (and `~/.pi-desktop`),
 * `pidesktop:<id prefix>` / `pi-desktop:`, the data dir and its sessions/ folder as paths, Pi not
 * claiming its files, the verbatim spec sample named alone, and the CLI on the data dir.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import initSqlJs from 'sql.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from '../../../src/cli/main.js';
import { discoverSessions, findSessions, openRef, resolveArg } from '../../../src/hosts/registry.js';
import type { Report } from '../../../src/report/json.js';
import { ANTHROPIC, HOME, MIDCONVO, SETTLE } from './helpers.js';

const env = { PI_DESKTOP_DATA_DIR: resolve(HOME) };

describe('PI-Desktop in the host registry', () => {
  it('discovers the three transcripts in $PI_DESKTOP_DATA_DIR/sessions (not the revisions file), with titles and project folders from pi.sqlite', async () => {
    const refs = (await discoverSessions({ env, home: '/nohome' })).filter((r) => r.host === 'pi-desktop');
    assert.deepEqual(refs.map((r) => [r.id, r.title, r.firstPrompt, r.project]).sort(), [
      [SETTLE, 'Parser delegation', 'Find where the parser lives; delegate the exploration.', '/home/dev/work/parser'],
      [MIDCONVO, 'Lexer delegate (flash)', 'Explore the lexer in a delegate.', '/home/dev/work/parser'],
      [ANTHROPIC, 'Parser review (Sonnet)', 'Delegate a review of the parser.', '/home/dev/work/parser'],
    ].sort());
  });

  it('a pi.sqlite without a `projects` table (or a session without project_id): no project, titles still read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pidesktop-noproj-'));
    try {
      cpSync(resolve(HOME), dir, { recursive: true });
      const SQL = await initSqlJs();
      const edit = async (sql: string, params: string[] = []) => {
        const db = new SQL.Database(readFileSync(join(dir, 'pi.sqlite')));
        db.run(sql, params);
        writeFileSync(join(dir, 'pi.sqlite'), db.export());
        db.close();
        const refs = (await discoverSessions({ env: { PI_DESKTOP_DATA_DIR: dir }, home: '/nohome' })).filter((r) => r.host === 'pi-desktop');
        return refs.map((r) => [r.title, r.project]).sort();
      };
      assert.deepEqual(await edit('UPDATE sessions SET project_id = NULL WHERE id = ?', [MIDCONVO]), [
        ['Lexer delegate (flash)', null],
        ['Parser delegation', '/home/dev/work/parser'],
        ['Parser review (Sonnet)', '/home/dev/work/parser'],
      ]);
      assert.deepEqual(await edit('DROP TABLE projects'), [
        ['Lexer delegate (flash)', null],
        ['Parser delegation', null],
        ['Parser review (Sonnet)', null],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds ~/.pi-desktop when the variable is unset', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pidesktop-home-'));
    try {
      symlinkSync(resolve(HOME), join(home, '.pi-desktop'));
      const refs = (await discoverSessions({ env: {}, home })).filter((r) => r.host === 'pi-desktop');
      assert.equal(refs.length, 3);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('resolves pidesktop:<id prefix>, pi-desktop:<id prefix>; an unknown prefix matches nothing', async () => {
    const opts = { env, home: '/nohome' };
    assert.deepEqual((await resolveArg('pidesktop:7c1e', opts)).map((r) => r.id), [SETTLE]);
    assert.deepEqual((await resolveArg('pi-desktop:b24d', opts)).map((r) => r.id), [MIDCONVO]);
    assert.equal((await resolveArg('pidesktop:', opts)).length, 1);
    assert.deepEqual(await resolveArg('pidesktop:zzzz', opts), []);
  });

  it('takes the data dir, its sessions/ folder or one transcript as a path; Pi claims none of them', async () => {
    const ids = async (p: string) => (await findSessions(p)).map((r) => [r.host, r.id]);
    const all = [['pi-desktop', SETTLE], ['pi-desktop', MIDCONVO], ['pi-desktop', ANTHROPIC]];
    assert.deepEqual(await ids(HOME), all);
    assert.deepEqual(await ids(join(HOME, 'sessions')), all);
    assert.deepEqual(await ids(join(HOME, 'sessions', `${SETTLE}.jsonl`)), [['pi-desktop', SETTLE]]);
    // A walk does not take a stray PI-Desktop-shaped file outside a sessions/ folder; named, it is read.
    const sample = 'test/fixtures/pi-desktop/ground-truth/pi-desktop-transcript.spec-example.jsonl';
    assert.deepEqual(await ids('test/fixtures/pi-desktop/ground-truth'), []);
    assert.deepEqual((await ids(sample)).map((x) => x[0]), ['pi-desktop']);
  });

  it('reads the verbatim spec sample (with its … placeholders): the bad line is a diagnostic, the assistant row a request', async () => {
    const [ref] = await findSessions('test/fixtures/pi-desktop/ground-truth/pi-desktop-transcript.spec-example.jsonl');
    const [s] = await openRef(ref);
    assert.equal(s.id, '0b0e…');
    assert.deepEqual(s.requests.map((r) => [r.source.line, r.model]), [[4, '…']]);
    assert.deepEqual(s.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.line, d.message.split(':')[0]]), [[5, 'malformed JSON line skipped']]);
  });

  it('prefix-lens analyze --json on the data dir: the sessions with their sub-agents, systemShapes per session', async () => {
    let out = '';
    const code = await main(['analyze', '--json', '--no-cache', HOME], (s) => (out += s), () => {});
    assert.equal(code, 0);
    const report = JSON.parse(out) as Report;
    assert.deepEqual(report.sessions.map((s) => [s.host, s.requests.length, s.parentId]), [
      ['pi-desktop', 10, null],
      ['pi-desktop', 1, SETTLE],
      ['pi-desktop', 3, null],
      ['pi-desktop', 1, MIDCONVO],
      ['pi-desktop', 3, null],
      ['pi-desktop', 1, ANTHROPIC],
    ]);
    assert.deepEqual(report.sessions.map((s) => s.systemShapes?.savedTokens ?? null), [1280, null, 64, null, 1516, null]);
  });

  it('prefix-lens analyze (text) prints each delta and both costs under its request', async () => {
    let out = '';
    await main(['analyze', '--no-cache', join(HOME, 'sessions', `${ANTHROPIC}.jsonl`)], (s) => (out += s), () => {});
    assert.match(out, /system delta \(line 7, sys-2\): section resumable added — delegation-settled: delegation reviewer \/ del-3: review the parser settled \(Task at line 5\)/);
    assert.match(out, /re-billed vs #1: collapsed ~1516 tokens \(\$0\.00523\) at system 0 @5942 \[sent\]; mid-conversation ~0 tokens, tail only; kept in place saves ~1516 tokens/);
    assert.match(out, /system deltas: 1 in 1 request; re-billed collapsed ~1516 tokens \(\$0\.00523\) vs mid-conversation ~0 tokens; sent collapsed; kept in place saves ~1516 tokens/);
  });
});
