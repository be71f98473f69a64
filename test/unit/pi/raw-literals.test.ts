/**
 * A long tool-result text is held as the bytes of JSON.stringify(text) (core/literal.ts). The
 * reader copies them from the line when the line writes them the same way (rawtext.ts), else it
 * serializes the parsed text (literalOf). Both must give the same bytes: checked on every
 * tool-result line of the Pi recordings and of generated sessions, on lines rewritten in the
 * forms JSON.stringify does not write (other escapes, whitespace, escaped or repeated keys), and
 * on random strings.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { recordedPiLines } from './helpers.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { JsonLiteral } from '../../../src/core/literal.js';
import { holdLiterals } from '../../../src/hosts/pi/read.js';
import { canonicalStringEnd, contentTextSpans } from '../../../src/hosts/pi/rawtext.js';
import type { ToolResultMessage } from '../../../src/hosts/pi/schema.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

/** The texts holdLiterals leaves for a line, with and without its bytes. */
function both(line: string): { raw: unknown[]; plain: unknown[]; fromLine: number } {
  const bytes = Buffer.from(line, 'utf8');
  const a = JSON.parse(line) as { message: ToolResultMessage };
  const b = JSON.parse(line) as { message: ToolResultMessage };
  holdLiterals(a.message, bytes);
  holdLiterals(b.message);
  const spans = contentTextSpans(bytes, a.message.content.length);
  const texts = (m: ToolResultMessage) => m.content.map((c) => ('text' in c && c.text instanceof JsonLiteral ? { bytes: c.text.bytes.toString('hex'), length: c.text.length } : 'text' in c ? c.text : null));
  let fromLine = 0;
  if (spans) for (let i = 0; i < a.message.content.length; i++) if (spans[2 * i] >= 0 && (a.message.content[i] as { text?: unknown }).text instanceof JsonLiteral) fromLine++;
  return { raw: texts(a.message), plain: texts(b.message), fromLine };
}

function toolResultLines(text: string): string[] {
  return text.split('\n').filter((l) => l.includes('"toolResult"') && (JSON.parse(l) as { message?: { role?: string } }).message?.role === 'toolResult');
}

/** A long tool-result line with `text` as its one text block, written by JSON.stringify. */
function lineWith(text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'message', id: 'a1', parentId: null, timestamp: '2026-11-01T00:00:00.000Z', message: { role: 'toolResult', toolCallId: 't1', toolName: 'read', content: [{ type: 'text', text }], isError: false, ...extra } });
}

describe('pi tool-result literals from the line bytes', () => {
  it('equal the serialized texts on every recorded and generated tool-result line', async function () {
    this.timeout(60_000);
    const lines = toolResultLines(recordedPiLines().join('\n'));
    const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-rawlit-'));
    try {
      for (let i = 0; i < 4; i++) {
        const file = join(dir, `s${i}.jsonl`);
        await writeSession(file, { bytes: 150_000, seed: 700 + i, id: `019a0700-0000-7000-8000-${String(i).padStart(12, '0')}`, cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 3) });
        lines.push(...toolResultLines(await readFile(file, 'utf8')));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    let fromLine = 0;
    for (const l of lines) {
      const r = both(l);
      assert.deepStrictEqual(r.raw, r.plain);
      fromLine += r.fromLine;
    }
    assert.ok(lines.length > 100, `${lines.length} lines`);
    assert.ok(fromLine > 50, `only ${fromLine} literals copied from the line`);
  });

  it('serializes instead when the line writes the text or a key on the way otherwise', () => {
    const text = `line one "quoted" \\ back\ttab\nline two é ✓ 😀 \u2028 \u0001 ${'x'.repeat(600)}`;
    const canonical = lineWith(text);
    assert.equal(both(canonical).fromLine, 1);
    const lit = JSON.stringify(text);
    const variants: string[] = [
      canonical.replace(lit, lit.replace('\\n', '\\u000a')), // a short form written long
      canonical.replace(lit, lit.replace('\\u0001', '\\u0001'.toUpperCase().replace('\\U', '\\u'))), // uppercase hex (same code)
      canonical.replace(lit, lit.replace('x', '\\u0078')), // an escaped letter
      canonical.replace(lit, lit.replace('x', '\\/')), // an escaped slash (another text, same check)
      canonical.replace(lit, lit.replace('😀', '\\ud83d\\ude00')), // an escaped pair
      canonical.replace(lit, lit.replace('é', '\\u00e9')),
      canonical.replace('"text":', '"text" : '),
      canonical.replace('"text":', '"t\\u0065xt":'),
      canonical.replace('"content":', '"c\\u006fntent":'),
      canonical.replace('{"type":"text",', '{"type":"text","text":"short",'), // the text key twice: JSON.parse keeps the last
      canonical.replace('"isError":false', '"isError":false,"content":[{"type":"text","text":"other"}]'), // content twice
      canonical.replace('{"type":"message",', '{"type":"message","message":{"role":"x"},'), // message twice
      canonical.replace('"isError":false', '"isError":false,"details":{"text":"inner","content":[{"text":"deeper"}]}'),
      `  ${canonical}  `,
      canonical.replace(/,/g, ' , '),
    ];
    for (const v of variants) {
      const r = both(v);
      assert.deepStrictEqual(r.raw, r.plain, v.slice(0, 200));
    }
    // Keys and values beside the path do not stop it.
    assert.equal(both(canonical.replace('"isError":false', '"isError":false,"details":{"text":"inner","content":[{"text":"deeper"}]}')).fromLine, 1);
    assert.equal(both(canonical.replace(/,/g, ' , ')).fromLine, 1);
  });

  it('canonicalStringEnd takes exactly what JSON.stringify writes (random strings)', () => {
    const s = fc.string({ unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\r', '\t', '\b', '\f', '\u0001', '\u001f', '\u007f', '\u2028', '/', 'é', '😀', 'a'), fc.string({ unit: 'binary', maxLength: 1 })) });
    fc.assert(
      fc.property(s, (t) => {
        const lit = Buffer.from(JSON.stringify(t), 'utf8');
        const end = canonicalStringEnd(lit, 0);
        if (t.isWellFormed()) assert.equal(end, lit.length);
        else assert.equal(end, -1, 'a lone surrogate is escaped: not taken');
      }),
      { numRuns: 1000 },
    );
  });
});
