/**
 * messageBlocks writes the envelope of a `{role, content}` message without serializing its keys
 * (wire.ts rolePre); every other shape takes the general path. Both must give the bytes of
 * JSON.stringify(message): the blocks' texts joined by the commas between content elements.
 * Checked on every message of the Pi recordings (as `{role, content}` and with extra keys) and on
 * random messages.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { messageBlocks } from '../../../src/core/wire.js';
import { recordedPiMessages } from '../pi/helpers.js';

function joined(message: Record<string, unknown>): string {
  return messageBlocks(0, 'messages[0]', message)
    .map((b) => b.text)
    .join(',');
}

describe('message envelopes', () => {
  it('{role, content} and every other shape give the bytes of JSON.stringify, on every recorded message', () => {
    let checked = 0;
    for (const m of recordedPiMessages()) {
      const content = Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content) }];
      const shapes: Array<Record<string, unknown>> = [
        { role: m.role, content },
        { role: m.role, content, extra: 1 },
        { kind: 'x', role: m.role, content },
        { content, role: m.role },
        { role: 7, content },
        { type: 'message', role: m.role, content, status: 'completed', id: 'msg_1' },
        m,
      ];
      for (const s of shapes) {
        assert.equal(joined(s), JSON.stringify(s));
        checked++;
      }
    }
    assert.ok(checked > 200, `${checked}`);
  });

  it('on random roles, keys and contents', () => {
    const text = fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u2028', 'é', '😀', 'a', 'role') });
    const part = fc.oneof(text.map((t) => ({ type: 'text', text: t })), fc.record({ type: fc.constant('tool_use'), id: text, input: fc.jsonValue() }));
    const message = fc.tuple(text, fc.array(part, { minLength: 1, maxLength: 4 }), fc.option(fc.dictionary(text, fc.jsonValue(), { maxKeys: 2 }), { nil: undefined })).map(([role, content, extra]) => {
      const m: Record<string, unknown> = { role, content };
      if (extra) for (const [k, v] of Object.entries(extra)) if (k !== 'role' && k !== 'content' && k !== '__proto__') m[k] = v;
      return m;
    });
    fc.assert(
      fc.property(message, (m) => {
        assert.equal(joined(m), JSON.stringify(m));
      }),
      { numRuns: 500 },
    );
  });
});
