import assert from 'node:assert/strict';
import { findSessions, openRef } from '../../../src/hosts/registry.js';
import { compareRequests, splitEscapedLines } from '../../../src/report/requestText.js';

const utf8 = new TextEncoder();

describe('a request rendered as text for a diff (report/requestText.ts)', () => {
  it('BotHarness drift #2 ↔ #3: the break at system messages[0].content, prefix byte 573 (block 3 from byte 296, 277 in), on "70" vs "50"', async () => {
    const [ref] = await findSessions('examples/botharness/sessions/--home-user-botlab--/bh-drift/session.jsonl.zstd');
    const [s] = await openRef(ref);
    const q = (i: number) => s.requests.find((r) => r.index === i)!;
    const c = compareRequests(q(2), q(3), { base: 'drift · request #2', request: 'drift · request #3' });
    assert.deepEqual([c.break?.segment, c.break?.path, c.break?.byteOffset, c.break?.depth, c.break?.offsetInBlock], ['system', 'messages[0].content', 573, 3, 277]);
    const lines = c.request.text.split('\n');
    assert.deepEqual(lines.slice(0, 2), ['drift · request #3', 'deepseek-official/deepseek-v4-flash · openai-completions · reconstructed · 8 blocks, 1,048 bytes']);
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

  it('a request that extends the other has no break and no change position', async () => {
    const [ref] = await findSessions('examples/botharness/sessions/--home-user-botlab--/bh-drift/session.jsonl.zstd');
    const [s] = await openRef(ref);
    const c = compareRequests(s.requests[0], s.requests[1], { base: 'a', request: 'b' });
    assert.deepEqual([c.break, c.base.changeAt, c.request.changeAt], [null, null, null]);
  });

  it('splits after \\n escapes only (not after an escaped backslash before n), and locates a byte in the split text', () => {
    const bytes = utf8.encode('"a\\nb\\\\nc\\n"');
    assert.deepEqual(splitEscapedLines(bytes, 10), { text: '"a\\n\nb\\\\nc\\n\n"', at: { line: 1, character: 6 } });
    // A byte inside a multi-byte character (é = 2 bytes) counts as that character's position.
    assert.deepEqual(splitEscapedLines(utf8.encode('é\\nx'), 1).at, { line: 0, character: 1 });
  });
});
