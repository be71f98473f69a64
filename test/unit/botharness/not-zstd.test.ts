/**
 * A DSH log named `session.jsonl.zstd` that is not zstd (random bytes): the read gives one error,
 * "not zstd (bad magic …)", instead of reading the bytes as text (an invalid UTF-8 warning and a
 * malformed JSON error per line, 1,000 listed and thousands counted); and a walk of the folders
 * holding it (the DSH home, the cwd folder, the session folder) finds it and says the same,
 * where it said "no sessions found". A log whose magic is right (a first frame being written)
 * and an empty log are left as they were.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDshLog } from '../../../src/hosts/botharness/read.js';
import { findSessions, openRef, releaseReaders } from '../../../src/hosts/registry.js';

/** `n` bytes that look random, the same on every run (SHA-256 in counter mode). */
function noise(n: number, seed: string): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0, at = 0; at < n; i++) at += createHash('sha256').update(`${seed}:${i}`).digest().copy(out, at);
  return out;
}

describe('BotHarness: a session.jsonl.zstd that is not zstd', () => {
  let home: string;
  let cwdDir: string;
  let sessionDir: string;
  let log: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'prefix-lens-not-zstd-'));
    cwdDir = join(home, 'sessions', '--tmp-project--');
    sessionDir = join(cwdDir, 's1');
    mkdirSync(sessionDir, { recursive: true });
    log = join(sessionDir, 'session.jsonl.zstd');
    writeFileSync(log, noise(2_000_000, 'dsh'));
  });
  after(() => {
    releaseReaders();
    rmSync(home, { recursive: true, force: true });
  });

  const bad = (file: string, magic: string) => ({ file, line: 1, severity: 'error', message: `not zstd (bad magic ${magic}; a zstd file starts with 28 b5 2f fd); not read` });

  it('the log named: one error, no events', async () => {
    const r = await readDshLog(log);
    assert.equal(r.compressed, false);
    assert.equal(r.events.length, 0);
    assert.deepEqual(r.diagnostics, [bad(log, 'f8 ed c4 64')]);
    const [ref] = await findSessions(log);
    assert.deepEqual(
      (await openRef(ref)).map((s) => [s.host, s.requests.length, s.diagnostics]),
      [['botharness', 0, [bad(log, 'f8 ed c4 64')]]],
    );
  });

  for (const [what, dir] of [
    ['the DSH home', () => home],
    ['the cwd folder', () => cwdDir],
    ['the session folder', () => sessionDir],
  ] as const) {
    it(`a walk of ${what} finds it, with the same error (was "no sessions found")`, async () => {
      const refs = await findSessions(dir());
      assert.deepEqual(
        refs.map((r) => [r.host, r.path, r.id]),
        [['botharness', log, 's1']],
      );
      assert.deepEqual((await openRef(refs[0])).map((s) => s.diagnostics), [[bad(log, 'f8 ed c4 64')]]);
    });
  }

  it('three bytes: their magic named; an empty log and one that starts with the magic are not claimed by a walk, as before', async () => {
    const short = join(home, 'sessions', '--tmp-short--', 's2');
    mkdirSync(short, { recursive: true });
    writeFileSync(join(short, 'session.jsonl.zstd'), 'abc');
    assert.deepEqual((await readDshLog(join(short, 'session.jsonl.zstd'))).diagnostics, [bad(join(short, 'session.jsonl.zstd'), '61 62 63')]);
    const empty = join(home, 'sessions', '--tmp-empty--', 's3');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, 'session.jsonl.zstd'), '');
    const writing = join(home, 'sessions', '--tmp-writing--', 's4');
    mkdirSync(writing, { recursive: true });
    writeFileSync(join(writing, 'session.jsonl.zstd'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x24]));
    assert.deepEqual((await findSessions(empty)).length, 0);
    assert.deepEqual((await findSessions(writing)).length, 0);
    assert.deepEqual((await findSessions(short)).map((r) => r.id), ['s2']);
  });
});
