/**
 * Hostile corpus: zstd frames that expand past a limit are stopped in bounded memory and time, in
 * the reader and in discovery's peek, and the frames after them are still read; a frame declaring
 * a huge window is decoded with the window it can use; one whose decoding would shift its window
 * too many times is refused.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Diagnostic } from '../../../src/core/model.js';
import { peekDshLog } from '../../../src/hosts/botharness/discover.js';
import { decodeFrame, frameEnd, MAX_WINDOW_WORK, zstdLogLines } from '../../../src/hosts/botharness/zstd.js';
import { frame, tempHome, zstdReady } from './dsh-fixture.js';

async function lines(file: string, limit?: number): Promise<{ lines: string[]; diags: Array<[number, string, string]> }> {
  const diags: Diagnostic[] = [];
  const out: string[] = [];
  for await (const l of zstdLogLines(file, diags, 1 << 20, limit)) out.push(l.text);
  return { lines: out, diags: diags.map((d) => [d.line, d.severity, d.message]) };
}

/** A frame without a content size: window descriptor `wd`, then RLE blocks of `size` bytes of `byte`. */
function rleFrame(wd: number, blocks: number, size: number, byte = 0x41): Buffer {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, wd])];
  for (let i = 0; i < blocks; i++) {
    const h = (size << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, byte]));
  }
  return Buffer.concat(parts);
}

/** A frame without a content size holding `text` in one raw block, declaring window descriptor `wd`. */
function rawFrame(wd: number, text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const h = (body.length << 3) | 1; // raw, last
  return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, wd, h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), body]);
}

describe('hostile corpus: zstd decode bounds', () => {
  let dir: string;
  const header = { type: 'session', version: 3, id: 's-bomb', createdAt: 1 };
  const title = { type: 'session/title', data: { title: 'after the bomb' } };
  before(async () => {
    await zstdReady();
    dir = tempHome('zstd-bounds');
  });

  it('a frame without a content size over the limit is skipped; the frames after it are read', async () => {
    const file = join(dir, 'rle.zstd');
    writeFileSync(file, Buffer.concat([frame([{ a: 0 }]), rleFrame(0x58, 5, 1000), frame([{ c: 3 }])]));
    const at = frame([{ a: 0 }]).length;
    assert.deepEqual(await lines(file, 4096), { lines: ['{"a":0}', '{"c":3}'], diags: [[2, 'error', `zstd frame #1 at byte ${at} decodes to up to 5000 bytes (limit 4096); skipped`]] });
    // Within the limit the same frame decodes (5000 × "A", no newline: joined to the next frame's first line).
    assert.deepEqual(await lines(file, 5000), { lines: ['{"a":0}', `${'A'.repeat(5000)}{"c":3}`], diags: [] });
  });

  it('a frame with a content size over the limit is skipped before decoding', async () => {
    const file = join(dir, 'fcs.zstd');
    const big = frame(Array.from({ length: 100 }, (_, i) => ({ i, pad: 'x'.repeat(40) })));
    const f = frameEnd(big, 0);
    assert.ok(f.kind === 'frame' && f.contentSize !== null);
    const size = f.kind === 'frame' ? f.contentSize : 0;
    writeFileSync(file, Buffer.concat([frame([{ a: 0 }]), big, frame([{ c: 3 }])]));
    const r = await lines(file, 4096);
    assert.deepEqual(r, { lines: ['{"a":0}', '{"c":3}'], diags: [[2, 'error', `zstd frame #1 at byte ${frame([{ a: 0 }]).length} decodes to ${size} bytes (limit 4096); skipped`]] });
  });

  it('a small frame declaring a 2 TiB window decodes with the window it can reference', async () => {
    const file = join(dir, 'window.zstd');
    writeFileSync(file, Buffer.concat([rawFrame(0xff, '{"x":1}\n'), frame([{ c: 3 }])]));
    assert.deepEqual(await lines(file), { lines: ['{"x":1}', '{"c":3}'], diags: [] });
  });

  it('a frame whose decoding would shift its window past MAX_WINDOW_WORK is refused, not decoded', async () => {
    const file = join(dir, 'work.zstd');
    const blocks = 2048; // × 128 KiB = 256 MiB, the limit: allowed by size, but 2048 × 256 MiB moved
    writeFileSync(file, Buffer.concat([rleFrame(0x90, blocks, 128 * 1024), frame([{ c: 3 }])]));
    assert.deepEqual(await lines(file), {
      lines: ['{"c":3}'],
      diags: [[1, 'error', `zstd frame #0 at byte 0 needs a 268435456-byte window shifted over 2048 blocks (limit ${MAX_WINDOW_WORK} bytes moved); skipped`]],
    });
  });

  it('decodeFrame stops streaming output at the limit even when the block bound would allow it', () => {
    const bytes = rleFrame(0x58, 5, 1000);
    const f = frameEnd(bytes, 0);
    assert.ok(f.kind === 'frame');
    if (f.kind !== 'frame') return;
    const given: Uint8Array[] = [];
    assert.deepEqual(decodeFrame(bytes, { ...f, maxContent: 100 }, 2500, (c) => given.push(c)), { kind: 'refused', detail: 'decodes to more than 2500 bytes (stopped at the limit)' });
    // The chunks given before it stopped: the first two blocks' (the third passed the limit).
    assert.deepEqual(given.map((c) => c.length), [1000, 1000]);
    given.length = 0;
    assert.deepEqual(decodeFrame(bytes, f, 5000, (c) => given.push(c)), { kind: 'ok', bytes: 5000 });
    assert.equal(Buffer.concat(given).toString(), 'A'.repeat(5000));
  });

  it("discovery's peek passes over a bomb and reads the header and the title after it", async () => {
    const file = join(dir, 'peek.zstd');
    // 2100 RLE blocks × 128 KiB = 275 MB from 8 KiB: within the 64 KiB peek, past its decoded budget.
    writeFileSync(file, Buffer.concat([frame([header]), rleFrame(0x58, 2100, 128 * 1024), frame([title])]));
    const p = await peekDshLog(file);
    assert.deepEqual([p.header?.id, p.title], ['s-bomb', 'after the bomb']);
    // A frame that fits the file but not the budget is passed over the same way.
    const mid = join(dir, 'peek-budget.zstd');
    writeFileSync(mid, Buffer.concat([frame([header]), rleFrame(0x58, 3, 1000, 0x0a), frame([title])]));
    assert.deepEqual((await peekDshLog(mid, 2000)).title, 'after the bomb');
    assert.deepEqual((await peekDshLog(mid, 1 << 20)).title, 'after the bomb');
    assert.deepEqual((await peekDshLog(mid, 40)).header, null);
  });
});
