/**
 * The one line splitter (src/hosts/linesplit.ts) against a straightforward split of the whole data,
 * on random bytes cut into random chunks (cuts inside a line, a CRLF, a multi-byte character); and the bound on bad-line diagnostics (LineProblems) on a
 * generated Codex rollout: the recorded fixture's 95 lines, then 2,500 bad lines.
 */
import assert from 'node:assert/strict';
import { copyFileSync, appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import fc from 'fast-check';
import { firstInvalidUtf8, LineSplitter, splitLines, type Line } from '../../../src/hosts/linesplit.js';
import { readCodexFile } from '../../../src/hosts/codex/read.js';
import { openSessions } from '../../../src/hosts/open.js';
import { LineProblems, MAX_DIAGNOSTICS } from '../../../src/hosts/numbers.js';
import type { Diagnostic } from '../../../src/core/model.js';
import { rollout } from '../codex/helpers.js';
import { readCcFile } from '../../../src/hosts/claude-code/read.js';
import { readPdTranscript } from '../../../src/hosts/pi-desktop/read.js';
import { readDshLog } from '../../../src/hosts/botharness/read.js';

/** The lines of `data` split in one go: on LF, CR before LF or at the end dropped, a BOM starting a line dropped, no line after a final LF. */
function reference(data: Uint8Array, maxLineBytes = Infinity): Line[] {
  const b = Buffer.from(data);
  const out: Line[] = [];
  let start = 0;
  while (start < b.length) {
    const nl = b.indexOf(0x0a, start);
    const eol = nl >= 0;
    const stop = eol ? nl : b.length;
    const end = eol ? nl + 1 : b.length;
    const line = out.length + 1;
    if (stop - start > maxLineBytes) out.push({ line, text: '', eol, oversized: stop - start, end });
    else {
      let raw = b.subarray(start, stop);
      if (raw.length && raw[raw.length - 1] === 0x0d) raw = raw.subarray(0, -1);
      if (raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) raw = raw.subarray(3);
      const text = raw.toString('utf8');
      const bad = text.includes('\uFFFD') ? firstInvalidUtf8(raw) : -1;
      out.push(bad >= 0 ? { line, text, eol, end, invalidUtf8: bad } : { line, text, eol, end });
    }
    start = end;
  }
  return out;
}

/** The splitter's lines of `chunks`, pushed one by one, then end(). */
function split(chunks: Uint8Array[], maxLineBytes?: number): Line[] {
  const s = new LineSplitter({ maxLineBytes });
  const out: Line[] = [];
  for (const c of chunks) out.push(...s.push(c));
  out.push(...s.end());
  return out;
}

/** `data` cut at `cuts` (positions, any order, duplicates allowed). */
function cut(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, data.length]) {
    out.push(data.slice(prev, c));
    prev = c;
  }
  return out;
}

/** Bytes rich in what splitting can get wrong: LF, CR, a BOM, multi-byte characters, invalid bytes. */
const piece = fc.oneof(
  fc.constantFrom('\n', '\r\n', '\r', '\uFEFF', 'é', '€', '😀', '{"a":1}', ' ', ''),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const bytesArb = fc.oneof(
  fc.array(piece, { maxLength: 30 }).map((p) => new Uint8Array(Buffer.from(p.join(''), 'utf8'))),
  fc.uint8Array({ maxLength: 60 }).map((b) => b.map((x) => (x % 7 === 0 ? 0x0a : x % 11 === 0 ? 0x0d : x))),
);

describe('LineSplitter: the same lines as one straightforward split, however the data is cut', () => {
  it('bytes cut anywhere (inside a line, a CRLF, a multi-byte character): same lines, numbers, offsets, flags', () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(), { maxLength: 12 }), (data, cuts) => {
        assert.deepEqual(split(cut(data, cuts)), reference(data));
      }),
      { numRuns: 2000 },
    );
  });

  it('with a small line limit: a longer line is counted (oversized, its byte length), the others split as before', () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 0, max: 12 }), (data, cuts, max) => {
        assert.deepEqual(split(cut(data, cuts), max), reference(data, max));
      }),
      { numRuns: 1000 },
    );
  });

  it('exact lines of a CRLF text with a BOM, a split "€", and a last line without newline', () => {
    const data = Buffer.from('\uFEFF{"a":1}\r\n\r\nx€y\nlast', 'utf8');
    const euro = data.indexOf(Buffer.from('€')) + 1;
    assert.deepEqual(split([data.subarray(0, euro), data.subarray(euro)]), [
      { line: 1, text: '{"a":1}', eol: true, end: 12 },
      { line: 2, text: '', eol: true, end: 14 },
      { line: 3, text: 'x€y', eol: true, end: 20 },
      { line: 4, text: 'last', eol: false, end: 24 },
    ]);
    assert.deepEqual(splitLines(Buffer.from('')), []);
    assert.deepEqual(splitLines(Buffer.from('\n')), [{ line: 1, text: '', eol: true, end: 1 }]);
  });

  it('mark and restore take back what was pushed since (a damaged zstd frame)', () => {
    const s = new LineSplitter();
    const b = (t: string) => Buffer.from(t, 'utf8');
    assert.deepEqual(s.push(b('a\nb')), [{ line: 1, text: 'a', eol: true, end: 2 }]);
    const m = s.mark();
    assert.equal(s.push(b('c\nd\n')).length, 2);
    s.restore(m);
    assert.deepEqual(s.push(b('x\n')), [{ line: 2, text: 'bx', eol: true, end: 5 }]);
    assert.deepEqual(s.end(), []);
  });
});

describe('bad-line diagnostics past MAX_DIAGNOSTICS are counted, not built', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-line-cap-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('LineProblems lists the first `max`, then one summary with the count, first and last line, worst severity', () => {
    const out: Diagnostic[] = [];
    const p = new LineProblems(out, 'f', 2);
    let built = 0;
    const msg = () => `m${++built}`;
    p.add(5, 'warning', msg);
    p.push({ file: 'f', line: 6, severity: 'warning', message: 'parsed' });
    p.add(9, 'warning', msg);
    p.push({ file: 'f', line: 7, severity: 'error', message: 'x' });
    p.add(8, 'info', msg);
    p.close();
    assert.equal(built, 1, 'messages past the bound are not built');
    assert.deepEqual(out, [
      { file: 'f', line: 5, severity: 'warning', message: 'm1' },
      { file: 'f', line: 6, severity: 'warning', message: 'parsed' },
      { file: 'f', line: 7, severity: 'error', message: '3 more bad lines not listed, lines 7–9 (the first 2 of this file are)', counted: { lines: 3, last: 9 } },
    ]);
  });

  it('a Codex rollout of the fixture\'s 95 lines, then 2,000 `{}` and 500 malformed lines: 1,000 listed, the rest one summary; the session report as before the bound', async () => {
    const fixture = rollout(resolve('test/fixtures/codex'));
    const file = join(dir, basename(fixture));
    copyFileSync(fixture, file);
    assert.equal(readFileSync(file, 'utf8').split('\n').length - 1, 95);
    appendFileSync(file, '{}\n'.repeat(2000) + '{"type":\n'.repeat(500));
    const read = await readCodexFile(file);
    assert.equal(read.diagnostics.length, MAX_DIAGNOSTICS + 1);
    assert.deepEqual(read.diagnostics[0], {
      file,
      line: 96,
      severity: 'warning',
      message: 'not a Codex rollout line (type: Invalid input: expected string, received undefined; payload: Invalid input: expected nonoptional, received undefined); skipped',
    });
    assert.equal(read.diagnostics[999].line, 1095);
    assert.deepEqual(read.diagnostics[1000], {
      file,
      line: 1096,
      severity: 'error',
      message: '1500 more bad lines not listed, lines 1096–2595 (the first 1000 of this file are)',
      counted: { lines: 1500, last: 2595 },
    });
    // The session's diagnostics, folded (numbers.ts): the summary counts as the 1,500 lines it stands for.
    const [s] = await openSessions(file);
    assert.equal(s.diagnostics.length, MAX_DIAGNOSTICS + 1);
    assert.deepEqual(s.diagnostics[1000], {
      file,
      line: 1096,
      severity: 'error',
      message: '1500 more problems in this file, lines 1096–2595, not listed one by one (the first 1000 diagnostics of the session are)',
    });
    assert.deepEqual(
      s.requests.map((r) => r.source.line),
      (await openSessions(fixture))[0].requests.map((r) => r.source.line),
    );
  });

  it('one malformed line past the bound (the Codex rollout then 1,001 of them) is "1 more bad line … line 1096" and "1 more problem … line 1096" (they said "1 more bad line(s)", "lines 1096–1096")', async () => {
    const fixture = rollout(resolve('test/fixtures/codex'));
    const file = join(dir, `one-more-${basename(fixture)}`);
    copyFileSync(fixture, file);
    appendFileSync(file, '{"type":\n'.repeat(MAX_DIAGNOSTICS + 1));
    const read = await readCodexFile(file);
    assert.equal(read.diagnostics.length, MAX_DIAGNOSTICS + 1);
    assert.deepEqual(read.diagnostics[1000], { file, line: 1096, severity: 'error', message: '1 more bad line not listed, line 1096 (the first 1000 of this file are)', counted: { lines: 1, last: 1096 } });
    const [s] = await openSessions(file);
    assert.deepEqual(s.diagnostics[1000], { file, line: 1096, severity: 'error', message: '1 more problem in this file, line 1096, not listed one by one (the first 1000 diagnostics of the session are)' });
  });

  for (const [host, read] of [
    ['Claude Code', async (f: string) => (await readCcFile(f)).diagnostics],
    ['PI-Desktop', async (f: string) => (await readPdTranscript(f)).diagnostics],
    ['BotHarness (DSH log)', async (f: string) => (await readDshLog(f)).diagnostics],
  ] as const) {
    it(`${host}: a file of 1,500 malformed lines gives 1,000 diagnostics and one summary of lines 1001–1500`, async () => {
      const file = join(dir, `${host.replace(/\W/g, '')}.jsonl`);
      writeFileSync(file, '{"type":\n'.repeat(1500));
      const d = await read(file);
      assert.equal(d.length, MAX_DIAGNOSTICS + 1);
      assert.deepEqual(d.slice(0, MAX_DIAGNOSTICS).map((x) => [x.line, x.severity]), Array.from({ length: MAX_DIAGNOSTICS }, (_, i) => [i + 1, 'error']));
      assert.match(d[0].message, /^malformed JSON line skipped: /);
      assert.deepEqual(d[MAX_DIAGNOSTICS], { file, line: 1001, severity: 'error', message: '500 more bad lines not listed, lines 1001–1500 (the first 1000 of this file are)', counted: { lines: 500, last: 1500 } });
    });
  }
});
