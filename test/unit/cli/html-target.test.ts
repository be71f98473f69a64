/**
 * `analyze --html FILE` truncates FILE before any input is read: it must never be a session, a
 * database or any other file that is not an earlier HTML report, nor share stdout with --json.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../runCli.js';

const PI_FILE = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

const run = runCli;

describe('--html target: what it may overwrite', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-html-target-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a session file named as the output (also an input, or the file argument left out), a database and a folder; the files are unchanged', async () => {
    const session = join(dir, 's.jsonl');
    copyFileSync(PI_FILE, session);
    const db = join(dir, 'opencode.db');
    copyFileSync('test/fixtures/opencode/opencode.db', db);
    const before = [readFileSync(session), readFileSync(db)];
    const cases: Array<[string[], RegExp]> = [
      [['analyze', '--html', session, session], /--html .*s\.jsonl: is also an input of this run; it would be overwritten before it is read/],
      [['analyze', '--html', session], /--html .*s\.jsonl: exists and is not an HTML report/],
      [['analyze', '--html', db, db], /--html .*opencode\.db: is also an input/],
      [['analyze', '--html', db, PI_FILE], /--html .*opencode\.db: exists and is not an HTML report/],
      [['analyze', '--html', dir, PI_FILE], /--html .*: is a folder/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.err, message);
    }
    assert.deepEqual([readFileSync(session), readFileSync(db)], before);
  });

  it('writes a new file, an empty one and over an earlier report', async () => {
    const file = join(dir, 'r.html');
    assert.equal((await run(['analyze', '--html', file, PI_FILE])).code, 0);
    const first = readFileSync(file, 'utf8');
    assert.match(first, /^<!DOCTYPE html>/);
    assert.equal((await run(['analyze', '--html', file, PI_FILE])).code, 0, 'an earlier report is overwritten');
    assert.equal(readFileSync(file, 'utf8'), first);
    const empty = join(dir, 'sub', 'empty.html');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(empty, '');
    assert.equal((await run(['analyze', '--html', empty, PI_FILE])).code, 0);
    assert.equal(readFileSync(empty, 'utf8'), first);
  });

  it('--json with --html - is a usage error (both would write stdout)', async () => {
    const r = await run(['analyze', '--json', '--html', '-', PI_FILE]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.match(r.err, /--json and --html - both write to stdout/);
  });
});
