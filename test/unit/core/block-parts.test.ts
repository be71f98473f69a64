/**
 * The chain hashes a reconstructed message block from its parts (chain.ts BLOCK_PARTS: envelope
 * and serialized value written one after the other, no concatenated text). The straightforward
 * way is the definition: H_k = sha256(H_{k-1} ‖ len_k ‖ UTF-8 of the block's `text`). Both must
 * give the same size and hash for every block of every session the readers build: each fixture
 * and ground-truth session of every host, generated Pi sessions (scripts/bench/corpus.ts), and
 * random messages (fast-check).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { BLOCK_PARTS, chainOf, type BlockNode } from '../../../src/core/chain.js';
import type { Session } from '../../../src/core/model.js';
import { messageBlocks } from '../../../src/core/wire.js';
import { findSessions, openRef } from '../../../src/hosts/registry.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

const ROOT = resolve(__dirname, '../../..');

/** H_k the straightforward way, from the node's predecessor and its block's text (or bytes). */
function straightHash(n: BlockNode): { size: number; hex: string } {
  const bytes = n.block.text !== undefined ? Buffer.from(n.block.text, 'utf8') : Buffer.from(n.block.bytes);
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(bytes.length));
  const prev = n.prev ? Buffer.from(n.prev.hashHex, 'hex') : Buffer.alloc(32);
  return { size: bytes.length, hex: createHash('sha256').update(prev).update(len).update(bytes).digest('hex') };
}

/** Checks every node reachable from the sessions' requests; returns how many had parts. */
function checkSessions(sessions: Session[], where: string): number {
  const seen = new Set<BlockNode>();
  let parts = 0;
  for (const s of sessions) {
    for (const r of s.requests) {
      for (let n = r.tail ?? null; n && !seen.has(n); n = n.prev) {
        seen.add(n);
        const want = straightHash(n);
        assert.equal(n.size, want.size, `${where} #${r.index} ${n.block.path}: size`);
        assert.equal(n.hashHex, want.hex, `${where} #${r.index} ${n.block.path}: hash`);
        if ((n.block as { [BLOCK_PARTS]?: unknown })[BLOCK_PARTS]) parts++;
      }
    }
  }
  return parts;
}

async function checkPath(path: string): Promise<number> {
  let parts = 0;
  for (const ref of await findSessions(path)) parts += checkSessions(await openRef(ref), `${path} ${ref.id}`);
  return parts;
}

describe('block parts hash as the block text', () => {
  it('on every fixture and ground-truth session of every host', async function () {
    this.timeout(120_000);
    let parts = 0;
    const dirs = ['test/fixtures', 'examples'].map((d) => join(ROOT, d)).filter(existsSync);
    for (const d of dirs) parts += await checkPath(d);
    // Pi, Claude Code, Codex, OpenCode, BotHarness and PI-Desktop reconstruct their messages.
    assert.ok(parts > 500, `only ${parts} blocks with parts`);
  });

  it('on generated Pi sessions (compactions, branches, errors, model switches across three APIs)', async function () {
    this.timeout(120_000);
    const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-parts-'));
    try {
      let parts = 0;
      for (let i = 0; i < 6; i++) {
        const file = join(dir, `s${i}.jsonl`);
        await writeSession(file, { bytes: 60_000 + i * 40_000, seed: 500 + i, id: `019a0500-0000-7000-8000-${String(i).padStart(12, '0')}`, cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 3) });
        parts += await checkPath(file);
      }
      assert.ok(parts > 1000, `only ${parts} blocks with parts`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('on random messages (any text: quotes, controls, non-ASCII, lone surrogates; string or block content)', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\t', '\u0001', '\u2028', '\ud800', 'é', '😀', 'a') }));
    const part = fc.oneof(
      text.map((t) => ({ type: 'text', text: t })),
      fc.record({ type: fc.constant('tool_result'), tool_use_id: fc.string(), content: text, is_error: fc.boolean() }),
      fc.record({ type: fc.constant('tool_use'), id: fc.string(), name: fc.string(), input: fc.jsonValue() }),
    );
    const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'tool'), content: fc.oneof(text, fc.array(part, { maxLength: 5 })), extra: fc.option(fc.string(), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), (messages) => {
        const tail = messages.reduce<BlockNode | null>((t, m, i) => chainOf(messageBlocks(i, `messages[${i}]`, m), t), null);
        for (let n = tail; n; n = n.prev) {
          const want = straightHash(n);
          assert.equal(n.size, want.size);
          assert.equal(n.hashHex, want.hex);
        }
      }),
      { numRuns: 300 },
    );
  });
});
