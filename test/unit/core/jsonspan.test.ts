import assert from 'node:assert/strict';
import { member, pathAtOffset, scanSpans } from '../../../src/core/jsonspan.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('JSON spans', () => {
  it('gives byte spans of members and items, counting UTF-8 bytes', () => {
    const buf = enc('{"a":"é","b":[1,{"c":null}]}');
    const root = scanSpans(buf);
    const b = member(root, 'b')!;
    assert.deepEqual([member(root, 'a')!.start, member(root, 'a')!.end], [5, 9]);
    assert.deepEqual(b.items!.map((i) => [i.start, i.end]), [[15, 16], [17, 27]]);
  });

  it('throws with the byte offset on invalid JSON', () => {
    assert.throws(() => scanSpans(enc('{"a":}')), /invalid JSON at byte 5/);
  });

  it('finds the path of an offset inside an unclosed message fragment', () => {
    const buf = enc('{"role":"user","content":[{"type":"text","text":"hello"},{"a":[1,{"b":"x"}]}');
    assert.equal(pathAtOffset(buf, buf.indexOf(0x68)), '.content[0].text'); // "h" of hello
    assert.equal(pathAtOffset(buf, buf.lastIndexOf(0x78)), '.content[1].a[1].b'); // "x"
  });
});
