/**
 * The DSH log's zstd framing: frames are read one by one, a damaged frame is skipped with a
 * diagnostic and the frames after it are read, a cut last frame yields the complete frames and a
 * warning, and skippable frames are passed over.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Diagnostic } from '../../../src/core/model.js';
import { frameEnd, zstdLogLines } from '../../../src/hosts/botharness/zstd.js';
import { frame, tempHome, zstdReady } from './dsh-fixture.js';
import { frameHeaderBytes } from './scenarios.js';

async function lines(file: string, chunk?: number): Promise<{ lines: Array<[number, string, number | null]>; diags: Diagnostic[] }> {
  const diags: Diagnostic[] = [];
  const out: Array<[number, string, number | null]> = [];
  for await (const l of zstdLogLines(file, diags, chunk)) out.push([l.line, l.text, l.frame]);
  return { lines: out, diags };
}

describe('DSH zstd log frames', () => {
  let dir: string;
  let frames: Buffer[];
  before(async () => {
    await zstdReady();
    dir = tempHome('zstd');
    frames = [frame([{ a: 0 }]), frame([{ b: 1 }, { b: 2 }]), frame([{ c: 3 }]), frame([{ d: 4 }, { d: 5 }])];
  });

  it('reads every frame in order, lines numbered across frames, whatever the read chunk size', async () => {
    const file = join(dir, 'ok.zstd');
    writeFileSync(file, Buffer.concat(frames));
    const want: Array<[number, string, number]> = [[1, '{"a":0}', 0], [2, '{"b":1}', 1], [3, '{"b":2}', 1], [4, '{"c":3}', 2], [5, '{"d":4}', 3], [6, '{"d":5}', 3]];
    for (const chunk of [7, 64, 1 << 20]) {
      const r = await lines(file, chunk);
      assert.deepEqual(r.lines, want, `chunk ${chunk}`);
      assert.deepEqual(r.diags, []);
    }
  });

  it('delimits a frame from its block headers (end offset = frame length)', () => {
    const all = Buffer.concat(frames);
    const f = frameEnd(all, 0);
    assert.equal(f.kind, 'frame');
    assert.equal(f.kind === 'frame' && f.end, frames[0].length);
    assert.deepEqual(frameEnd(all.subarray(0, frames[0].length - 1), 0), { kind: 'incomplete' });
  });

  it('a cut last frame: the complete frames are read, then a warning at the next line', async () => {
    const file = join(dir, 'cut.zstd');
    const cut = frames[3].subarray(0, frames[3].length - 3);
    writeFileSync(file, Buffer.concat([frames[0], frames[1], frames[2], cut]));
    const r = await lines(file, 16);
    assert.deepEqual(r.lines.map((l) => l[1]), ['{"a":0}', '{"b":1}', '{"b":2}', '{"c":3}']);
    const at = frames[0].length + frames[1].length + frames[2].length;
    assert.deepEqual(r.diags, [
      {
        file,
        line: 5,
        severity: 'warning',
        message: `truncated last zstd frame #3 at byte ${at} (${cut.length} of its bytes present; the log may still be being written): its lines are not read`,
      },
    ]);
  });

  it('a corrupt frame in the middle: an error at its place, the frames after it still read', async () => {
    const file = join(dir, 'corrupt.zstd');
    const bad = Buffer.from(frames[1]);
    bad[4 + frameHeaderBytes(bad)] |= 0b110; // first block's type → 3 (reserved)
    writeFileSync(file, Buffer.concat([frames[0], bad, frames[2], frames[3]]));
    const r = await lines(file);
    assert.deepEqual(r.lines, [[1, '{"a":0}', 0], [2, '{"c":3}', 2], [3, '{"d":4}', 3], [4, '{"d":5}', 3]]);
    assert.equal(r.diags.length, 1);
    assert.equal(r.diags[0].line, 2);
    assert.equal(r.diags[0].severity, 'error');
    assert.equal(
      r.diags[0].message,
      `corrupt zstd frame #1 at byte ${frames[0].length}: zstd block of the reserved type; its lines are not read (${bad.length} bytes skipped to the next frame; later line numbers count the lines read)`,
    );
  });

  it('a frame whose compressed bytes do not decode: an error naming the decoder failure', async () => {
    const file = join(dir, 'garbled.zstd');
    const big = frame(Array.from({ length: 40 }, (_, i) => ({ i, text: `line ${i} of a compressible batch` })));
    const bad = Buffer.from(big);
    // Keep the block header; overwrite the block's content with bytes no decoder accepts.
    bad.fill(0xff, 4 + frameHeaderBytes(bad) + 3, bad.length);
    writeFileSync(file, Buffer.concat([frames[0], bad, frames[2]]));
    const r = await lines(file);
    assert.deepEqual(r.lines.map((l) => l[1]), ['{"a":0}', '{"c":3}']);
    assert.equal(r.diags.length, 1);
    assert.match(r.diags[0].message, new RegExp(`^corrupt zstd frame #1 at byte ${frames[0].length} \\(${bad.length} bytes\\): .+; its lines are not read`));
  });

  it('a frame that would decode past the limit (RLE blocks) is skipped before decoding', async () => {
    const file = join(dir, 'bomb.zstd');
    const blocks = 2100; // × 128 KiB = 275,251,200 bytes > 256 MiB, from 8 KiB of frame
    const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58])]; // no content size; window 128 KiB
    for (let i = 0; i < blocks; i++) {
      const h = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0); // RLE block
      parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, 0x41]));
    }
    const bomb = Buffer.concat(parts);
    writeFileSync(file, Buffer.concat([frames[0], bomb, frames[2]]));
    const r = await lines(file);
    assert.deepEqual(r.lines.map((l) => l[1]), ['{"a":0}', '{"c":3}']);
    assert.deepEqual(r.diags.map((d) => [d.line, d.severity, d.message]), [
      [2, 'error', `zstd frame #1 at byte ${frames[0].length} decodes to up to 275251200 bytes (limit 268435456); skipped`],
    ]);
  });

  it('skippable frames (RFC 8878 §3.1.2) are passed over silently', async () => {
    const file = join(dir, 'skip.zstd');
    const skip = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0]), Buffer.from('abc')]);
    writeFileSync(file, Buffer.concat([frames[0], skip, frames[2]]));
    const r = await lines(file);
    assert.deepEqual(r.lines, [[1, '{"a":0}', 0], [2, '{"c":3}', 1]]);
    assert.deepEqual(r.diags, []);
  });

  it('bytes that are not a frame: skipped to the next frame magic with an error', async () => {
    const file = join(dir, 'junk.zstd');
    writeFileSync(file, Buffer.concat([frames[0], Buffer.from('JUNKJUNK'), frames[2]]));
    const r = await lines(file);
    assert.deepEqual(r.lines.map((l) => l[1]), ['{"a":0}', '{"c":3}']);
    assert.deepEqual(r.diags.map((d) => [d.line, d.severity, d.message]), [[2, 'error', `not a zstd frame at byte ${frames[0].length}: no zstd frame magic (found 0x4b4e554a); 8 bytes skipped`]]);
  });
});
