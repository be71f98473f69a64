/**
 * Hostile corpus: bytes that are not valid UTF-8 in a JSONL transcript. Every JSONL reader (Pi,
 * Claude Code, Codex, PI-Desktop, BotHarness raw and zstd) reads the line with U+FFFD in their
 * place and warns at its line with the byte offset of the first invalid sequence; a real U+FFFD
 * (EF BF BD) is no warning.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compress } from '@bokuweb/zstd-wasm';
import { firstInvalidUtf8 } from '../../../src/hosts/lines.js';
import { zstdReady } from '../botharness/dsh-fixture.js';
import { runCli } from './harness.js';

const MARK = Buffer.from('"text":"');
const BAD = Buffer.from([0xff, 0xfe]);
const REAL_FFFD = Buffer.from('\uFFFD', 'utf8');

/**
 * The fixture's lines with bytes inserted after the first `"text":"` of each line holding one: a
 * real U+FFFD in the first such line, invalid bytes in the others.
 * @returns the lines and the warnings expected: [line, byte offset]
 */
function mutate(file: string): { lines: Buffer[]; want: Array<[number, number]> } {
  const raw = readFileSync(file);
  const lines: Buffer[] = [];
  for (let s = 0; s < raw.length; ) {
    const nl = raw.indexOf(0x0a, s);
    const e = nl < 0 ? raw.length : nl;
    lines.push(raw.subarray(s, e));
    s = e + 1;
  }
  const want: Array<[number, number]> = [];
  let first = true;
  lines.forEach((l, i) => {
    const at = l.indexOf(MARK);
    if (at < 0) return;
    const cut = at + MARK.length;
    lines[i] = Buffer.concat([l.subarray(0, cut), first ? REAL_FFFD : BAD, l.subarray(cut)]);
    if (!first) want.push([i + 1, cut]);
    first = false;
  });
  assert.ok(want.length >= 2, `${file}: lines to mutate`);
  return { lines, want };
}

async function utf8Warnings(file: string): Promise<Array<[number, number]>> {
  const r = await runCli(['analyze', '--json', '--no-cache', file]);
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out) as { sessions: Array<{ diagnostics: Array<{ file: string; line: number; severity: string; message: string }> }> };
  const got: Array<[number, number]> = [];
  for (const s of out.sessions) {
    for (const d of s.diagnostics) {
      const m = /^invalid UTF-8 at byte (\d+) of the line replaced by U\+FFFD; the request's bytes are not the host's$/.exec(d.message);
      if (!m) continue;
      assert.deepEqual([d.file, d.severity], [file, 'warning']);
      got.push([d.line, Number(m[1])]);
    }
  }
  return got;
}

describe('hostile corpus: invalid UTF-8 in JSONL transcripts', () => {
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-utf8-'));
    await zstdReady();
  });

  const jsonl: Array<[string, string, string]> = [
    ['Pi', 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl', 'pi/s.jsonl'],
    ['Claude Code', 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl', 'cc/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl'],
    ['Codex', 'test/fixtures/codex/codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl', 'codex/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl'],
    ['PI-Desktop', 'test/fixtures/pi-desktop/home/sessions/b24d9e07-3f6a-4b1c-8e2d-5a7c9f1e3b42.jsonl', 'pd/sessions/b24d9e07-3f6a-4b1c-8e2d-5a7c9f1e3b42.jsonl'],
    ['BotHarness (raw)', 'test/fixtures/botharness/minimal-preset/session.jsonl', 'bh/sessions/--x--/s1/session.jsonl'],
  ];
  for (const [host, fixture, name] of jsonl) {
    it(`${host}: a warning at each line with invalid bytes, none for a real U+FFFD`, async () => {
      const { lines, want } = mutate(fixture);
      const file = join(dir, name);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 ? [l, Buffer.from('\n')] : [l]))));
      assert.deepEqual(await utf8Warnings(file), want);
    });
  }

  it('BotHarness (zstd): per line of each frame, and for a line split across two frames', async () => {
    const { lines, want } = mutate('test/fixtures/botharness/minimal-preset/session.jsonl');
    const text = lines.filter((l) => l.length).map((l) => Buffer.concat([l, Buffer.from('\n')]));
    // One frame per line, except the last line with invalid bytes: cut in two frames just after them.
    const k = text.map((l) => l.indexOf(BAD) >= 0).lastIndexOf(true);
    assert.ok(k > 0, 'a line holds invalid bytes');
    const split = text[k].indexOf(BAD) + BAD.length + 3;
    const parts = [...text.slice(0, k), text[k].subarray(0, split), text[k].subarray(split), ...text.slice(k + 1)];
    const file = join(dir, 'bhz/sessions/--x--/s2/session.jsonl.zstd');
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, Buffer.concat(parts.map((p) => Buffer.from(compress(p, 3)))));
    assert.deepEqual(await utf8Warnings(file), want);
  });

  it('firstInvalidUtf8 follows the table of well-formed sequences', () => {
    const cases: Array<[number[], number]> = [
      [[0x61, 0xef, 0xbf, 0xbd, 0xf0, 0x9f, 0x98, 0x80, 0xc3, 0xa9], -1],
      [[0x61, 0xc0, 0x80], 1], // overlong
      [[0xe0, 0x80, 0x80], 0], // overlong
      [[0xed, 0xa0, 0x80], 0], // surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut at the end
      [[0xe2, 0x82, 0x61], 0], // cut by an ASCII byte
      [[0x80], 0], // lone continuation
      [[0xf5, 0x80, 0x80, 0x80], 0],
    ];
    for (const [b, at] of cases) assert.equal(firstInvalidUtf8(Uint8Array.from(b)), at, Buffer.from(b).toString('hex'));
  });
});
