/**
 * A Pi session whose header is not on line 1 (two other objects before it, e.g. lines joined in
 * front of it): Pi itself takes a file whose first parsed line is not the header as invalid
 * (reference/pi.md §1, loadEntriesFromFile), but the header is the file's own — its id is the
 * cache key Pi sent the requests with — so the read says where it is and uses it: its id and cwd,
 * the requests as in the intact file. It said "first line is not a Pi session header", took the
 * id from the file name, and "session entry without a valid id/parentId" at the header's line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';
import { readPiFile } from '../../../src/hosts/pi/read.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
const ID = '01a230ec-9a4e-7417-8af1-68d34234bdc8';
const NO_ID = (type: string) =>
  `${type} entry without a valid id/parentId (${type === '(no type)' ? 'type: Invalid input: expected string, received undefined; ' : ''}id: Invalid input: expected string, received undefined; parentId: Invalid input: expected string, received undefined); skipped`;

describe('Pi reader: the session header on line 3', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-late-header-'));
    file = join(dir, 'late.jsonl');
    writeFileSync(file, `{"type":"x_note","note":1}\n{"hello":2}\n${readFileSync(PI, 'utf8')}`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('says where the header is and that Pi expects it on line 1; lines 1–2 are entries without an id, as before', async () => {
    const r = await readPiFile(file);
    assert.deepEqual(r.diagnostics, [
      {
        file,
        line: 1,
        severity: 'error',
        message: `session header found on line 3; Pi expects it on line 1 (the first line is not {"type":"session",…}) and would treat the file as invalid. Reading it with that header anyway: session id ${ID}`,
      },
      { file, line: 1, severity: 'error', message: NO_ID('x_note') },
      { file, line: 2, severity: 'error', message: NO_ID('(no type)') },
    ]);
    assert.deepEqual(r.header, { type: 'session', version: 3, id: ID, timestamp: '2026-12-01T09:25:42.095Z', cwd: '/home/user/pi-lab/main/project' });
    assert.equal(r.version, 3);
  });

  it("the session has the header's id and cwd and the intact file's requests (two lines later)", async () => {
    const s = await readPiSession(file);
    const whole = await readPiSession(PI);
    assert.equal(s.id, ID);
    assert.equal(s.cwd, '/home/user/pi-lab/main/project');
    assert.deepEqual(
      s.requests.map((x) => [x.source.line - 2, x.usage?.cacheRead ?? null]),
      whole.requests.map((x) => [x.source.line, x.usage?.cacheRead ?? null]),
    );
    assert.equal(s.requests.length, 13);
  });

  it('the live reader gives the same session, and so does it after lines are appended', async () => {
    const view = (s: Awaited<ReturnType<typeof readPiSession>>) => ({ id: s.id, cwd: s.cwd, diagnostics: s.diagnostics, requests: s.requests.map((x) => [x.source.line, x.usage?.cacheRead ?? null, x.model]) });
    const live = await PiLiveSession.open(file);
    assert.deepEqual(view(live.session()), view(await readPiSession(file)));
    writeFileSync(file, '{"type":"x_note","id":"n1","parentId":null}\n', { flag: 'a' });
    assert.equal(await live.update(), 'appended');
    assert.deepEqual(view(live.session()), view(await readPiSession(file)));
  });
});
