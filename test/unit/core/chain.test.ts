import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { append, chainOf, commonDepth, markedNodes, type BlockNode } from '../../../src/core/chain.js';
import type { Block } from '../../../src/core/model.js';

const block = (text: string, item = 0, breakpoint = false): Block => ({
  segment: 'messages',
  item,
  path: `messages[${item}]`,
  bytes: new TextEncoder().encode(text),
  ...(breakpoint ? { breakpoint: { ttlSeconds: 300 } } : {}),
});

describe('prefix chains', () => {
  it('hashes H_k = sha256(H_{k-1} ‖ len_k ‖ bytes_k) from 32 zero bytes', () => {
    const tail = chainOf([block('a'), block('bc')])!;
    const len = (n: number) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(BigInt(n));
      return b;
    };
    const h1 = createHash('sha256').update(Buffer.alloc(32)).update(len(1)).update('a').digest();
    const h2 = createHash('sha256').update(h1).update(len(2)).update('bc').digest();
    assert.equal(tail.hashHex, h2.toString('hex'));
    assert.equal(tail.shortHash, h2.toString('hex').slice(0, 12));
    assert.equal(tail.bytesThrough, 3);
    // The short form from the digest alone (before any full hex was made) is the full hex's first 12 digits.
    const fresh = chainOf([block('a'), block('bc')])!;
    assert.equal(fresh.shortHash, h2.toString('hex').slice(0, 12));
    assert.equal(fresh.prev!.shortHash, h1.toString('hex').slice(0, 12));
  });

  it('short hashes are the first 12 hex digits of the full hash, for any block bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 8 }), (parts) => {
        const mk = () => chainOf(parts.map((p, i) => ({ segment: 'messages', item: i, path: `messages[${i}]`, bytes: p }) as Block))!;
        const short = mk().shortHash;
        assert.match(short, /^[0-9a-f]{12}$/);
        assert.equal(short, mk().hashHex.slice(0, 12));
      }),
    );
  });

  it('finds the common depth of content-equal chains built from different nodes', () => {
    const texts = Array.from({ length: 1000 }, (_, i) => `block ${i}`);
    const a = chainOf(texts.map((t, i) => block(t, i)))!;
    const changed = [...texts];
    changed[637] = 'edited';
    const b = chainOf(changed.map((t, i) => block(t, i)))!;
    assert.equal(commonDepth(a, b), 637);
    assert.equal(commonDepth(a, a.at(400)), 400);
    assert.equal(commonDepth(a, chainOf([block('other')])), 0);
  });

  it('shares nodes between a request and its extension', () => {
    const a = chainOf([block('x'), block('y')])!;
    const b = append(a, block('z'));
    assert.equal(b.at(2), a);
    assert.equal(commonDepth(a, b), 2);
  });

  it('lists breakpoint-carrying nodes newest first', () => {
    const tail = chainOf([block('h', 0, true), block('m1', 1), block('m2', 2, true), block('m3', 3)])!;
    assert.deepEqual(markedNodes(tail).map((n) => n.depth), [3, 1]);
  });

  it('finds ancestors and common depths as a walk over every node does (jump pointers), on branching chains', () => {
    // A tree of chains: each new chain forks an earlier one at some depth and appends its own blocks
    // (some equal in content to the other branch's, so equal hashes on distinct nodes count too).
    const naiveAt = (n: BlockNode, depth: number) => {
      let x: BlockNode | null = n;
      while (x && x.depth > depth) x = x.prev;
      return x;
    };
    const naiveCommon = (a: BlockNode, b: BlockNode) => {
      const x = naiveAt(a, Math.min(a.depth, b.depth))!;
      const y = naiveAt(b, Math.min(a.depth, b.depth))!;
      const pathA: BlockNode[] = [];
      const pathB: BlockNode[] = [];
      for (let n: BlockNode | null = x; n; n = n.prev) pathA.unshift(n);
      for (let n: BlockNode | null = y; n; n = n.prev) pathB.unshift(n);
      let d = 0;
      while (d < pathA.length && pathA[d].hashKey === pathB[d].hashKey) d++;
      return d;
    };
    fc.assert(
      fc.property(
        fc.array(fc.record({ from: fc.nat(), at: fc.nat(), len: fc.integer({ min: 1, max: 90 }), text: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 20 }),
        (forks, queries) => {
          const tails: BlockNode[] = [];
          for (const f of forks) {
            const base = tails.length ? tails[f.from % tails.length] : null;
            let n = base ? naiveAt(base, f.at % (base.depth + 1)) : null;
            for (let i = 0; i < f.len; i++) n = append(n, block(`b${(n?.depth ?? 0) + 1}-${(i + f.text) % 4 === 0 ? f.text : 'same'}`));
            tails.push(n!);
          }
          for (const [i, j, d] of queries) {
            const a = tails[i % tails.length];
            const b = tails[j % tails.length];
            const depth = (d % (a.depth + 2)) - 0;
            assert.equal(a.at(depth), depth < 1 || depth > a.depth ? null : naiveAt(a, depth));
            assert.equal(commonDepth(a, b), naiveCommon(a, b));
            assert.equal(commonDepth(b, a), naiveCommon(a, b));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
