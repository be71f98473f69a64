/**
 * A file named `.jsonl` that is no text at all (random bytes) gives one diagnostic, "not a
 * text/JSONL session", instead of one "malformed JSON line" per line (1,000 listed and thousands
 * counted): the check is in the line reader every JSONL reader shares (lines.ts BinarySniff).
 * It never fires on a real session with a few damaged lines: 31 lines of binary data before the
 * recorded Pi session leave it read from its header on; a text file that is not JSON is read
 * line by line as before.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCcFile } from '../../../src/hosts/claude-code/read.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { SNIFF_LINES } from '../../../src/hosts/lines.js';
import { openSessions } from '../../../src/hosts/open.js';
import { readPiFile } from '../../../src/hosts/pi/read.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

/** `n` bytes that look random, the same on every run: SHA-256 in counter mode over `seed`. */
function noise(n: number, seed: string): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0, at = 0; at < n; i++) at += createHash('sha256').update(`${seed}:${i}`).digest().copy(out, at);
  return out;
}

/** `k` lines of binary data, each 40 noise bytes without LF, plus a NUL byte. */
function binaryLines(k: number): Buffer {
  return Buffer.concat(Array.from({ length: k }, (_, i) => Buffer.concat([Buffer.from([0]), Buffer.from(noise(40, `line${i}`).map((b) => (b === 0x0a ? 0x20 : b))), Buffer.from('\n')])));
}

const notText = (lines: number, binary: number) =>
  `not a text/JSONL session: none of its first ${lines} non-blank lines is JSON and ${binary === lines ? 'all hold' : `${binary} hold`} NUL bytes or invalid UTF-8 (binary data?); not read`;

describe('hostile corpus: a binary file named .jsonl', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-binary-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('2 MB of random bytes: one error at line 1, no requests (was 1,000 malformed lines and a summary of 6,800 more)', async () => {
    const file = join(dir, 'bin.jsonl');
    writeFileSync(file, noise(2_000_000, 'bin'));
    const [s] = await openSessions(file);
    assert.equal(s.host, 'pi');
    assert.equal(s.requests.length, 0);
    assert.deepEqual(s.diagnostics, [{ file, line: 1, severity: 'error', message: `cannot read file: ${notText(SNIFF_LINES, 31)}` }]);
  });

  it('the same one diagnostic from the Claude Code and Codex readers (the shared line reader)', async () => {
    const file = join(dir, 'bin2.jsonl');
    writeFileSync(file, noise(2_000_000, 'bin'));
    assert.deepEqual((await readCcFile(file)).diagnostics, [{ file, line: 1, severity: 'error', message: `cannot read transcript: ${notText(SNIFF_LINES, 31)}` }]);
    const cx = await readCodexSession(file);
    assert.deepEqual(cx[0].diagnostics.filter((d) => d.message.includes('not a text/JSONL')), [{ file, line: 1, severity: 'error', message: `cannot read rollout: ${notText(SNIFF_LINES, 31)}` }]);
  });

  it('a short binary file (one line, 100 bytes): one error', async () => {
    const file = join(dir, 'short.jsonl');
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0]), noise(98, 'short').map((b) => (b === 0x0a ? 0x20 : b))]));
    const r = await readPiFile(file);
    assert.deepEqual(r.diagnostics, [{ file, line: 1, severity: 'error', message: 'cannot read file: not a text/JSONL session: its only non-blank line is not JSON and it holds NUL bytes or invalid UTF-8 (binary data?); not read' }]);
  });

  it(`${SNIFF_LINES - 1} binary lines before the recorded Pi session: read from its header on (one error per binary line, the header found on line ${SNIFF_LINES})`, async () => {
    const file = join(dir, 'damaged-head.jsonl');
    writeFileSync(file, Buffer.concat([binaryLines(SNIFF_LINES - 1), readFileSync(PI)]));
    const r = await readPiFile(file);
    const whole = await readPiFile(PI);
    assert.equal(r.header?.id, whole.header?.id);
    assert.equal(r.entries.length, whole.entries.length);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.line, d.severity]),
      Array.from({ length: SNIFF_LINES - 1 }, (_, i) => [i + 1, 'error']),
    );
    assert.ok(r.diagnostics.every((d) => d.message.startsWith('malformed JSON line skipped: ')));
  });

  it(`${SNIFF_LINES} binary lines before it: not a text/JSONL session`, async () => {
    const file = join(dir, 'binary-head.jsonl');
    writeFileSync(file, Buffer.concat([binaryLines(SNIFF_LINES), readFileSync(PI)]));
    assert.deepEqual((await readPiFile(file)).diagnostics, [{ file, line: 1, severity: 'error', message: `cannot read file: ${notText(SNIFF_LINES, SNIFF_LINES)}` }]);
  });

  it('a text file that is not JSON (40 log lines) is read line by line as before: 40 malformed lines', async () => {
    const file = join(dir, 'log.jsonl');
    writeFileSync(file, Array.from({ length: 40 }, (_, i) => `2026-12-04 10:00:${String(i).padStart(2, '0')} INFO started\n`).join(''));
    const d = (await readPiFile(file)).diagnostics;
    assert.equal(d.filter((x) => x.message.startsWith('malformed JSON line skipped: ')).length, 40);
    assert.ok(!d.some((x) => x.message.includes('not a text/JSONL')));
  });
});
