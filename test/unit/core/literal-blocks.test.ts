/**
 * core/literal.ts JsonLiteral: the Pi reader holds long tool-result texts as the UTF-8 bytes of
 * their JSON literal, and the request blocks built from them hash and keep those bytes. Every
 * block's `text`, `bytes`, size and hash must be what the same session read with plain strings
 * gives (three APIs: Anthropic merges a run into one user message, Completions and Responses
 * send each result as its own item), before and after compaction; and JSON.stringify of a value
 * holding a JsonLiteral must be that of the string, for any string literalOf accepts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { chainOf, type BlockNode } from '../../../src/core/chain.js';
import { JsonLiteral, LITERAL_CHARS, literalOf } from '../../../src/core/literal.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { compactChains, messageBlocks } from '../../../src/core/wire.js';
import { readPiFile, type PiRead } from '../../../src/hosts/pi/read.js';
import { reconstructRequests } from '../../../src/hosts/pi/normalize.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

interface Seen {
  path: string;
  text: string | undefined;
  bytes: string;
  size: number;
  hash: string;
}

const look = (n: BlockNode): Seen => ({ path: n.block.path, text: n.block.text, bytes: Buffer.from(n.block.bytes).toString('base64'), size: n.size, hash: n.hashHex });

/** Every distinct node of the requests' chains, in a fixed order (request by request, tail first), and each request's hash. */
function chains(requests: LlmRequest[]): { nodes: Seen[]; tails: string[] } {
  const seen = new Set<BlockNode>();
  const nodes: Seen[] = [];
  for (const r of requests) for (let n = r.tail ?? null; n && !seen.has(n); n = n.prev) seen.add(n) && nodes.push(look(n));
  return { nodes, tails: requests.map((r) => r.tail?.hashHex ?? '') };
}

/** The read with every JsonLiteral replaced by its string (what the reader held before). */
function plainStrings(read: PiRead): number {
  let n = 0;
  for (const rec of read.entries) {
    const e = rec.entry;
    if (e?.type !== 'message' || e.message.role !== 'toolResult') continue;
    for (const b of e.message.content) {
      if (b.text instanceof JsonLiteral) {
        (b as { text: unknown }).text = b.text.toJSON();
        n++;
      }
    }
  }
  return n;
}

/** Reconstructs `file` with the reader's JsonLiterals and with plain strings; compares every chain. @returns literals read */
async function check(file: string): Promise<number> {
  const held = reconstructRequests(await readPiFile(file)).requests;
  const plainRead = await readPiFile(file);
  const literals = plainStrings(plainRead);
  const plain = chains(reconstructRequests(plainRead).requests);
  assert.equal(held.length, plain.tails.length);
  const before = chains(held);
  assert.deepEqual(before.tails, plain.tails);
  before.nodes.forEach((n, i) => assert.deepEqual(n, plain.nodes[i], `${file}: node ${i} (${n.path})`));
  assert.equal(before.nodes.length, plain.nodes.length);
  compactChains(held.map((r) => r.tail));
  const after = chains(held);
  after.nodes.forEach((n, i) => assert.deepEqual(n, plain.nodes[i], `${file}: node ${i} (${n.path}), compacted`));
  return literals;
}

describe('long tool-result texts held as JSON literal bytes (core/literal.ts)', () => {
  it('JSON.stringify of a value holding a JsonLiteral is that of the string; short or ill-formed strings stay strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: LITERAL_CHARS, maxLength: 2000 }), fc.string({ unit: 'grapheme', minLength: LITERAL_CHARS }), (a, b) => {
        for (const s of [a, b, `“${a}”\n\t"\\`, b + a]) {
          const l = literalOf(s);
          if (!s.isWellFormed()) {
            assert.equal(l, s);
            continue;
          }
          assert.ok(l instanceof JsonLiteral);
          assert.equal(l.length, s.length);
          assert.equal(l.toJSON(), s);
          assert.equal(JSON.stringify({ role: 'tool', content: l, tool_call_id: 'x' }), JSON.stringify({ role: 'tool', content: s, tool_call_id: 'x' }));
          // A reconstructed block of it: the same text, bytes and hash as with the string.
          const node = (v: unknown) => chainOf(messageBlocks(0, 'messages[1]', { role: 'tool', content: v, tool_call_id: 'x' }), null)!;
          assert.deepEqual(look(node(l)), look(node(s)));
          const run = (v: unknown) => chainOf(messageBlocks(0, 'messages[0]', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: v, is_error: false }] }), null)!;
          assert.deepEqual(look(run(l)), look(run(s)));
        }
      }),
      { numRuns: 40 },
    );
    assert.equal(literalOf('x'.repeat(LITERAL_CHARS - 1)), 'x'.repeat(LITERAL_CHARS - 1));
    assert.equal(literalOf(`${'x'.repeat(LITERAL_CHARS)}\uD800`), `${'x'.repeat(LITERAL_CHARS)}\uD800`);
  });

  it('give every block of the Pi fixture sessions the text, bytes, size and hash plain strings give', async () => {
    const refs = (await findSessions('test/fixtures/pi')).filter((r) => r.host === 'pi');
    assert.equal(refs.length, 2, 'the main and long recordings');
    for (const r of refs) await check(r.path);
  });

  it('and of a generated session over three APIs (tool results of 0.2-50 KB), compacted or not', async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-literal-'));
    try {
      const file = join(dir, 's.jsonl');
      await writeSession(file, { bytes: 700_000, seed: 2, id: 'literal-test', cwd: '/w', startMs: Date.UTC(2026, 0, 1) });
      const literals = await check(file);
      assert.equal(literals, 96, 'tool-result texts held as literals (seed 2)');
      const apis = new Set(reconstructRequests(await readPiFile(file)).requests.map((r) => r.api));
      assert.deepEqual([...apis].sort(), ['anthropic-messages', 'openai-completions', 'openai-responses']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
