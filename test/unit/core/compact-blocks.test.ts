/**
 * core/wire.ts compactChains: a full Pi read keeps its long reconstructed message blocks as UTF-8
 * bytes instead of the transcript values they serialize. Every block's `text`, `bytes`, size and
 * hash must stay what they were, on the Pi fixture sessions and on a generated session with long
 * tool results (scripts/bench/corpus.ts), and the long blocks must really be compacted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { compactChains } from '../../../src/core/wire.js';
import { readPiFile } from '../../../src/hosts/pi/read.js';
import { reconstructRequests } from '../../../src/hosts/pi/normalize.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

interface Seen {
  text: string | undefined;
  bytes: string;
  size: number;
  hash: string;
}

function nodesOf(requests: LlmRequest[]): BlockNode[] {
  const seen = new Set<BlockNode>();
  for (const r of requests) for (let n = r.tail ?? null; n && !seen.has(n); n = n.prev) seen.add(n);
  return [...seen];
}

const look = (n: BlockNode): Seen => ({ text: n.block.text, bytes: Buffer.from(n.block.bytes).toString('base64'), size: n.size, hash: n.hashHex });

/** Compacts the reconstruction of `file` and compares every node with its state before; returns [nodes, compacted]. */
async function check(file: string): Promise<[number, number]> {
  const recon = reconstructRequests(await readPiFile(file));
  const nodes = nodesOf(recon.requests);
  const before = nodes.map(look);
  compactChains(recon.requests.map((r) => r.tail));
  let compacted = 0;
  nodes.forEach((n, i) => {
    assert.deepEqual(look(n), before[i], `${file}: node ${n.depth} (${n.block.path})`);
    // A compacted block keeps its bytes as parts (Buffers, and strings around shared literal bytes).
    const own = Object.getOwnPropertySymbols(n.block).map((k) => (n.block as unknown as Record<symbol, unknown>)[k]);
    if (own.some((v) => Array.isArray(v) && v.some((p) => p instanceof Uint8Array))) compacted++;
  });
  return [nodes.length, compacted];
}

describe('compacted message blocks (long texts kept as UTF-8 bytes)', () => {
  it('leave every text, byte, size and hash of the Pi fixture sessions as they were', async () => {
    const refs = (await findSessions('test/fixtures/pi')).filter((r) => r.host === 'pi');
    assert.ok(refs.length >= 2, `${refs.length} Pi fixture sessions`);
    let total = 0;
    for (const r of refs) total += (await check(r.path))[0];
    assert.ok(total > 100, `${total} nodes`);
  });

  it('compact the long blocks of a generated session (tool results of 0.2-50 KB, three APIs), same results', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-compact-'));
    try {
      const file = join(dir, 's.jsonl');
      await writeSession(file, { bytes: 600_000, seed: 5, id: 'compact-test', cwd: '/w', startMs: Date.UTC(2026, 0, 1) });
      const [nodes, compacted] = await check(file);
      assert.ok(compacted > 50 && compacted < nodes, `${compacted} of ${nodes} nodes compacted`);
      // Exactly the blocks whose serialized value has >= 512 characters (as counted when every
      // block was serialized again to decide; short blocks are now skipped by their byte size).
      assert.deepEqual([nodes, compacted], [528, 103]);
      // readPiSession compacts: its requests give the same hashes as an uncompacted reconstruction.
      const s = await readPiSession(file);
      const plain = reconstructRequests(await readPiFile(file)).requests;
      assert.deepEqual(s.requests.map((r) => r.tail?.hashHex), plain.map((r) => r.tail?.hashHex));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
