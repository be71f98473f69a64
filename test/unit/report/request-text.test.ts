import assert from 'node:assert/strict';
import { findSessions, openRef } from '../../../src/hosts/registry.js';
import { compareRequests, comparisonLine, prefixDifference, requestDocument, splitEscapedLines } from '../../../src/report/requestText.js';

const utf8 = new TextEncoder();

describe('a request rendered as text for a diff (report/requestText.ts)', () => {
  it('BotHarness drift #2 ↔ #3: the break at system messages[0].content, prefix byte 573 (block 3 from byte 296, 277 in), on "70" vs "50"', async () => {
    const [ref] = await findSessions('examples/botharness/sessions/--home-user-botlab--/bh-drift/session.jsonl.zstd');
    const [s] = await openRef(ref);
    const q = (i: number) => s.requests.find((r) => r.index === i)!;
    const c = compareRequests(q(2), q(3), 'drift');
    assert.deepEqual(c.difference, { kind: 'differs', depth: 3, segment: 'system', path: 'messages[0].content', offsetInBlock: 277, prefixByte: 573 });
    assert.equal(comparisonLine('drift', '2', '3', c.difference, { verdict: 'break', causes: ['system-changed', 'persona-drift'] }), 'drift: #2 ↔ #3 · verdict break (system-changed, persona-drift) · first difference in block 3 (system · messages[0].content), byte 277 of the block, prefix byte 573');
    const lines = c.request.text.split('\n');
    // The same first line on both sides (no change in the diff); the second names the request's prefix.
    assert.deepEqual(lines.slice(0, 2), ['drift', 'deepseek-official/deepseek-v4-flash · openai-completions · reconstructed · 8 blocks, 1,048 bytes']);
    // Sizes and starts add up to the 1,048 bytes of the prefix.
    assert.deepEqual(c.request.blockLines.map((l) => /^──── block (\d+): (\w+) · (\S+) · ([\d,]+) bytes at prefix byte ([\d,]+)/.exec(lines[l])!.slice(1).join(' ')), [
      '1 tools tools[0] 135 0',
      '2 tools tools[1] 161 135',
      '3 system messages[0].content 459 296',
      '4 messages messages[1] 57 755',
      '5 messages messages[2] 60 812',
      '6 messages messages[3] 57 872',
      '7 messages messages[4] 60 929',
      '8 messages messages[5] 59 989',
    ]);
    assert.match(lines[c.request.blockLines[2]], /^──── block 3: system · messages\[0\]\.content · 459 bytes at prefix byte 296 · prefix [0-9a-f]{12}$/);
    assert.deepEqual(c.request.changeAt, { line: 16, character: 24 });
    assert.deepEqual(c.base.changeAt, { line: 16, character: 24 });
    assert.equal(lines[16], '## Soul (SOUL.md) [1% — 70/5,000 chars]\\n');
    assert.equal(c.base.text.split('\n')[16], '## Soul (SOUL.md) [1% — 50/5,000 chars]\\n');
    // Removing the inserted line breaks gives each block's canonical bytes back.
    let n = s.requests.find((r) => r.index === 3)!.tail;
    for (let i = c.request.blockLines.length - 1; i >= 0; i--, n = n!.prev) {
      const end = i + 1 < c.request.blockLines.length ? c.request.blockLines[i + 1] - 1 : lines.length - 1;
      const body = lines.slice(c.request.blockLines[i] + 1, end).join('\n').replace(/\\n\n/g, '\\n');
      assert.equal(body, new TextDecoder().decode(n!.block.bytes), `block ${i + 1}`);
    }
  });

  it('extends, start of, identical, no prefix known: each said as such, with no change position', async () => {
    const [ref] = await findSessions('examples/botharness/sessions/--home-user-botlab--/bh-drift/session.jsonl.zstd');
    const [s] = await openRef(ref);
    const [r1, r2] = s.requests;
    const c = compareRequests(r1, r2, 'a');
    assert.deepEqual([c.difference, c.base.changeAt, c.request.changeAt], [{ kind: 'extends' }, null, null]);
    assert.equal(comparisonLine('a', '1', '2', c.difference), "a: #1 ↔ #2 · #2's prefix extends #1's");
    assert.deepEqual(prefixDifference(r2, r1), { kind: 'start-of' });
    assert.deepEqual(prefixDifference(r2, r2), { kind: 'same' });
    const none = { ...r2, tail: null };
    assert.deepEqual([prefixDifference(none, r2), prefixDifference(r1, none), prefixDifference(none, none)], [{ kind: 'unknown', missing: 'base' }, { kind: 'unknown', missing: 'request' }, { kind: 'unknown', missing: 'both' }]);
    assert.equal(comparisonLine('a', '1', '2', prefixDifference(r1, none)), 'a: #1 ↔ #2 · no prefix known for #2');
    assert.equal(requestDocument(none, 'a').text, 'a\ndeepseek-official/deepseek-v4-flash · openai-completions · reconstructed · no prefix known\n');
  });

  it('text the transcript names (title, model, role) cannot add lines, so block lines and the change position stay right', async () => {
    const [ref] = await findSessions('examples/botharness/sessions/--home-user-botlab--/bh-drift/session.jsonl.zstd');
    const [s] = await openRef(ref);
    const q = (i: number) => s.requests.find((r) => r.index === i)!;
    const evil = { ...q(3), model: 'v4\n+++ spoofed\r\x1b[31m' };
    const plain = compareRequests(q(2), q(3), 'drift');
    const c = compareRequests(q(2), evil, 'evil\n+++ spoofed');
    assert.deepEqual([c.request.blockLines, c.request.changeAt], [plain.request.blockLines, plain.request.changeAt]);
    assert.deepEqual(c.request.text.split(/\r\n|\r|\n/).slice(0, 2), ['evil⏎+++ spoofed', 'deepseek-official/v4⏎+++ spoofed··[31m · openai-completions · reconstructed · 8 blocks, 1,048 bytes']);
    assert.equal(comparisonLine('evil\n+++ x', '2', '3', c.difference).split('\n').length, 1);
  });

  it('splits after \\n escapes only (not after an escaped backslash before n), and locates a byte in the split text', () => {
    const bytes = utf8.encode('"a\\nb\\\\nc\\n"');
    assert.deepEqual(splitEscapedLines(bytes, 10), { text: '"a\\n\nb\\\\nc\\n\n"', at: { line: 1, character: 6 } });
    // A byte inside a multi-byte character is that character's position (é = 2 bytes, 😀 = 4 bytes and 2 UTF-16 units).
    assert.deepEqual(splitEscapedLines(utf8.encode('xéy'), 2).at, { line: 0, character: 1 });
    assert.deepEqual(splitEscapedLines(utf8.encode('x😀y'), 3).at, { line: 0, character: 1 });
    assert.deepEqual(splitEscapedLines(utf8.encode('x😀y'), 5).at, { line: 0, character: 3 });
    // A raw CR (wire bodies may hold one between tokens) is a line break, as VS Code counts lines.
    assert.deepEqual(splitEscapedLines(utf8.encode('{\r"a":1}'), 3).at, { line: 1, character: 1 });
  });
});
