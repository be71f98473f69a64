import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJsonLine, readJsonLines, readLines, type Line } from '../../../src/hosts/lines.js';
import { cleanup, tempDir } from './helpers.js';

async function collect(file: string, opts?: Parameters<typeof readLines>[1]): Promise<Line[]> {
  const out: Line[] = [];
  for await (const l of readLines(file, opts)) out.push(l);
  return out;
}

describe('hosts/lines: streaming line reader', () => {
  let dir: string;
  before(async () => (dir = await tempDir()));
  after(async () => cleanup(dir));

  it('numbers lines from 1, strips CRLF and a BOM, and yields a last line without newline with eol false', async () => {
    const f = join(dir, 'crlf.jsonl');
    await writeFile(f, '\uFEFF{"a":1}\r\n{"b":2}\r\n\r\n{"c":');
    const lines = await collect(f);
    assert.deepEqual(lines, [
      { line: 1, text: '{"a":1}', eol: true, end: 12 },
      { line: 2, text: '{"b":2}', eol: true, end: 21 },
      { line: 3, text: '', eol: true, end: 23 },
      { line: 4, text: '{"c":', eol: false, end: 28 },
    ]);
  });

  it('continues at a byte offset with the next line number (a session that grew), ends exact across chunks', async () => {
    const f = join(dir, 'grow.jsonl');
    await writeFile(f, '{"a":1}\n{"b":22}\n{"c":333}\n');
    const lines = await collect(f, { start: 8, firstLine: 2, chunkBytes: 5 });
    assert.deepEqual(lines, [
      { line: 2, text: '{"b":22}', eol: true, end: 17 },
      { line: 3, text: '{"c":333}', eol: true, end: 27 },
    ]);
    assert.deepEqual(await collect(f, { start: 27, firstLine: 4 }), []);
  });

  it('joins lines split across chunks without breaking multi-byte characters', async () => {
    const f = join(dir, 'utf8.jsonl');
    const text = `${JSON.stringify({ t: 'héllo wörld ✓ 𝄞'.repeat(20) })}\n${JSON.stringify({ t: 'ünïcödé' })}\n`;
    await writeFile(f, text);
    const lines = await collect(f, { chunkBytes: 7 });
    assert.equal(lines.length, 2);
    assert.equal(lines[0].text, text.split('\n')[0]);
    assert.equal(lines[1].text, '{"t":"ünïcödé"}');
  });

  it('does not decode a line longer than maxLineBytes and reports its size', async () => {
    const f = join(dir, 'huge.jsonl');
    await writeFile(f, `{"ok":1}\n${'x'.repeat(5000)}\n{"ok":2}`);
    const lines = await collect(f, { chunkBytes: 512, maxLineBytes: 1000 });
    assert.deepEqual(
      lines.map((l) => [l.line, l.text, l.oversized]),
      [
        [1, '{"ok":1}', undefined],
        [2, '', 5000],
        [3, '{"ok":2}', undefined],
      ],
    );
  });

  it('parseJsonLine returns a diagnostic instead of throwing: warning for a truncated last line, error otherwise', () => {
    const garbage = parseJsonLine('f.jsonl', { line: 3, text: 'not json', eol: true });
    assert.equal(garbage.ok, false);
    if (!garbage.ok) {
      assert.equal(garbage.diagnostic.line, 3);
      assert.equal(garbage.diagnostic.severity, 'error');
      assert.match(garbage.diagnostic.message, /^malformed JSON line skipped/);
    }
    const tail = parseJsonLine('f.jsonl', { line: 9, text: '{"type":"mess', eol: false });
    assert.equal(tail.ok, false);
    if (!tail.ok) {
      assert.equal(tail.diagnostic.severity, 'warning');
      assert.match(tail.diagnostic.message, /^truncated last line/);
    }
    assert.deepEqual(parseJsonLine('f.jsonl', { line: 1, text: '{"a":[1]}', eol: true }), { ok: true, value: { a: [1] } });
  });

  it('readJsonLines skips blank lines and keeps going after a bad line', async () => {
    const f = join(dir, 'mixed.jsonl');
    await writeFile(f, '{"a":1}\n\n   \n{oops\n{"b":2}\n');
    const got: Array<[number, string]> = [];
    for await (const r of readJsonLines(f)) got.push([r.line, 'value' in r ? JSON.stringify(r.value) : `diag:${r.diagnostic.line}`]);
    assert.deepEqual(got, [
      [1, '{"a":1}'],
      [4, 'diag:4'],
      [5, '{"b":2}'],
    ]);
  });
});
