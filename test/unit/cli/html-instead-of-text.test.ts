/**
 * `analyze --html FILE` writes the timeline instead of the text report: stdout stays empty (or
 * holds the `--json` report), stderr says what was written in one line, after the errors and
 * warnings of the sessions read (`<file>:<line>: <message>`, as `check` prints them). It printed
 * the whole text report as well.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from '../../runCli.js';
import type { Report } from '../../../src/report/json.js';

const PI_LONG = resolve('test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--');

describe('analyze --html FILE instead of the text report', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-html-only-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a recorded session: nothing on stdout, one line on stderr, the report in the file (exit 0)', async () => {
    const file = join(dir, 'long.html');
    const r = await runCli(['analyze', '--no-cache', '--html', file, PI_LONG]);
    assert.deepEqual([r.code, r.out, r.err], [0, '', `prefix-lens: wrote the timeline of 1 session, 8 requests to ${file}`]);
    assert.match(readFileSync(file, 'utf8'), /^<!DOCTYPE html>/);
  });

  it('beside an unreadable file: its errors on stderr before the line (exit 0, the other session read)', async () => {
    const bad = join(dir, 'x.jsonl');
    writeFileSync(bad, 'garbage\n');
    const file = join(dir, 'two.html');
    const r = await runCli(['analyze', '--no-cache', '--html', file, bad, PI_LONG]);
    assert.equal(r.code, 0);
    assert.equal(r.out, '');
    assert.deepEqual(r.err.split('\n'), [
      `${bad}:1: malformed JSON line skipped: Unexpected token 'g', "garbage" is not valid JSON`,
      `${bad}:1: first line is not a Pi session header ({"type":"session",…}); Pi would treat the file as invalid. Reading the entries anyway, session id from the file name: x`,
      `prefix-lens: wrote the timeline of 2 sessions, 8 requests to ${file}`,
    ]);
    // Alone, the unreadable file is still exit 2, as without --html.
    assert.equal((await runCli(['analyze', '--no-cache', '--html', join(dir, 'bad.html'), bad])).code, 2);
  });

  it('with --json: the JSON on stdout (as without --html), the line on stderr', async () => {
    const file = join(dir, 'json.html');
    const r = await runCli(['analyze', '--no-cache', '--json', '--html', file, PI_LONG]);
    assert.equal(r.code, 0);
    assert.deepEqual((JSON.parse(r.out) as Report).sessions.map((s) => [s.id, s.requests.length]), [['01a230ec-991a-7497-9a50-b9f4f6517541', 8]]);
    assert.equal(r.err, `prefix-lens: wrote the timeline of 1 session, 8 requests to ${file}`);
  });
});
