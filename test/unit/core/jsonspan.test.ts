import assert from 'node:assert/strict';
import { JsonTooDeep, member, pathAtOffset, rootMember, scanSpans } from '../../../src/core/jsonspan.js';

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

  it('rootMember: the first root member of that name, scanned only up to it; nested or absent is undefined', () => {
    const buf = enc('{"messages":[{"model":"x","t":"}],\\""}],"mé":1,"model":"gpt-5","model":"later"}');
    const m = rootMember(buf, 'model')!;
    assert.deepEqual([m.type, m.start, m.end], ['string', 56, 63]);
    assert.equal(rootMember(enc('{"messages":[{"model":"nested"}]}'), 'model'), undefined);
    assert.equal(rootMember(enc('{}'), 'model'), undefined);
    // What follows the member is not read.
    assert.equal(rootMember(enc(`{"model":"m",${'!'.repeat(100)}`), 'model')!.end, 12);
    assert.throws(() => rootMember(enc('[{"model":"a"}]'), 'model'), /invalid JSON at byte 0: expected an object/);
    assert.throws(() => rootMember(enc('{"a":1 "model":"m"}'), 'model'), /invalid JSON at byte 7: expected , or }/);
    // Nesting before the member past the limit: JsonTooDeep, not a stack overflow.
    assert.throws(() => rootMember(enc(`{"a":${'['.repeat(100_000)}`), 'model', 512), JsonTooDeep);
  });
});
