import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { append, chainOf, commonDepth, markedNodes } from '../../../src/core/chain.js';
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
});
