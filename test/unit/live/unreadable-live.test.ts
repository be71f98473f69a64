/**
 * A followed Pi session that cannot be continued (gone, not a regular file, only a header) is read
 * again only when its file changed: every update used to read it again and report a reset, so an
 * unchanged header-only session was "rewritten" at every poll, and `--watch` on a deleted file
 * whose folder also held its output re-reported it thousands of times a second.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';

const MAIN = (() => {
  const d = 'test/fixtures/pi/main/agent/sessions';
  const sub = join(d, readdirSync(d)[0]);
  return join(sub, readdirSync(sub).find((f) => f.endsWith('.jsonl'))!);
})();

describe('live tail (Pi): a file that cannot be continued', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-unreadable-live-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('header only: unchanged until lines are appended, then read again with its requests', async () => {
    const file = join(dir, 's.jsonl');
    const lines = readFileSync(MAIN, 'utf8').split('\n');
    writeFileSync(file, `${lines[0]}\n`);
    const live = await PiLiveSession.open(file);
    assert.deepEqual([await live.update(), await live.update(), await live.update()], ['unchanged', 'unchanged', 'unchanged']);
    appendFileSync(file, `${lines.slice(1).join('\n')}`);
    assert.equal(await live.update(), 'reset');
    assert.equal(live.session().requests.length, 13);
    assert.equal(await live.update(), 'unchanged');
  });

  it('deleted: one reset (its error diagnostic), then unchanged; back again: read again', async () => {
    const file = join(dir, 's.jsonl');
    copyFileSync(MAIN, file);
    const live = await PiLiveSession.open(file);
    assert.equal(live.session().requests.length, 13);
    unlinkSync(file);
    assert.equal(await live.update(), 'reset');
    const gone = live.session();
    assert.equal(gone.requests.length, 0);
    assert.match(gone.diagnostics.map((d) => d.message).join('\n'), /ENOENT/);
    assert.deepEqual([await live.update(), await live.update()], ['unchanged', 'unchanged']);
    copyFileSync(MAIN, file);
    assert.equal(await live.update(), 'reset');
    assert.equal(live.session().requests.length, 13);
  });

  it('replaced by a link to a character device: one reset, then unchanged', async () => {
    const file = join(dir, 's.jsonl');
    copyFileSync(MAIN, file);
    const live = await PiLiveSession.open(file);
    unlinkSync(file);
    symlinkSync('/dev/zero', file);
    assert.equal(await live.update(), 'reset');
    assert.match(live.session().diagnostics.map((d) => d.message).join('\n'), /character device/);
    assert.deepEqual([await live.update(), await live.update()], ['unchanged', 'unchanged']);
  });
});
