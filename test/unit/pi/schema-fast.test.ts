/**
 * The fast path of entry validation (schema.ts fastAgentMessage) must give exactly zod's verdict
 * and output: checked on every message of the recordings and on mutations of each.
 */
import assert from 'node:assert/strict';
import { recordedPiMessages } from './helpers.js';
import { AgentMessageSchema, fastAgentMessage } from '../../../src/hosts/pi/schema.js';

/** Each message with one key removed or given a wrong type, and its first content block broken. */
function mutations(m: Record<string, unknown>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const k of Object.keys(m)) {
    const { [k]: _, ...rest } = m;
    out.push(rest);
    for (const v of [null, 1, 'x', [], {}]) out.push({ ...m, [k]: v });
  }
  if (Array.isArray(m.content) && m.content.length) {
    const first = m.content[0] as Record<string, unknown>;
    for (const k of Object.keys(first)) {
      const { [k]: _, ...rest } = first;
      out.push({ ...m, content: [rest, ...m.content.slice(1)] });
      out.push({ ...m, content: [{ ...first, [k]: 7 }, ...m.content.slice(1)] });
    }
  }
  return out;
}

describe('pi schema fast path', () => {
  it('agrees with zod on every recorded message and on their mutations', () => {
    const messages = recordedPiMessages();
    assert.equal(messages.length, 41);
    let checked = 0;
    for (const m of messages) {
      for (const candidate of [m, ...mutations(m)]) {
        const zod = AgentMessageSchema.safeParse(candidate);
        const fast = fastAgentMessage(structuredClone(candidate));
        if (fast !== undefined) {
          assert.ok(zod.success, `fast accepted what zod rejects: ${JSON.stringify(candidate).slice(0, 200)}`);
          assert.equal(JSON.stringify(fast), JSON.stringify(zod.data)); // same values, same key order
        }
        checked++;
      }
    }
    assert.equal(checked, 1755); // 41 messages and their mutations
  });
});
