/**
 * Cause classification on pairs of Anthropic-shaped bodies that differ in one way each.
 */
import assert from 'node:assert/strict';
import { chainOf } from '../../../src/core/chain.js';
import { classifyBreak } from '../../../src/core/classify.js';
import { diverge } from '../../../src/core/diverge.js';
import { parseWireBody } from '../../../src/core/wire.js';

const tools = [
  { name: 'read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
];
const body = (over: Record<string, unknown> = {}) =>
  new TextEncoder().encode(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
      ],
      system: [{ type: 'text', text: 'You are an agent.\nCurrent date: 2026-11-29\nBe brief.' }],
      tools,
      ...over,
    }),
  );

function causes(a: Uint8Array, b: Uint8Array): string[] {
  const x = chainOf(parseWireBody(a).blocks)!;
  const y = chainOf(parseWireBody(b).blocks)!;
  const bp = diverge(x, y)!;
  return classifyBreak(bp, x, y).map((c) => `${c.kind}: ${c.detail}`);
}

describe('cause classification', () => {
  it('a date in the system prompt: system-changed at its line, and a volatile value', () => {
    const b = body({ system: [{ type: 'text', text: 'You are an agent.\nCurrent date: 2026-11-30\nBe brief.' }] });
    assert.deepEqual(causes(body(), b), ['system-changed: block 0, line 2: Current date: 2026-11-30', 'volatile-value: date in the changed bytes']);
  });

  it('tools reordered, added, and changed only in key order', () => {
    assert.deepEqual(causes(body(), body({ tools: [tools[1], tools[0]] })), ['tools-changed: reordered: read, bash → bash, read']);
    assert.deepEqual(causes(body(), body({ tools: [...tools, { name: 'write', input_schema: {} }] })), ['tools-changed: added write']);
    const reKeyed = { description: tools[0].description, name: 'read', input_schema: tools[0].input_schema };
    assert.deepEqual(causes(body(), body({ tools: [reKeyed, tools[1]] })), ['tools-changed: key order only in read']);
    const schema = { ...tools[0], input_schema: { type: 'object', properties: { file: { type: 'string' } } } };
    assert.deepEqual(causes(body(), body({ tools: [schema, tools[1]] })), ['tools-changed: schema bytes of read']);
  });

  it('the same text sent as a string instead of a block array is representation-only', () => {
    const b = body({
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
      ],
    });
    assert.deepEqual(causes(body(), b), ['representation-only: same text, other encoding at message 0']);
  });

  it('an edited earlier message is a history rewrite at its index', () => {
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'hey' }] },
      ],
    });
    assert.deepEqual(causes(body(), b), ['history-rewritten: edit at message 1']);
  });
});
