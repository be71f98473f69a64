import assert from 'node:assert/strict';
import { parseWireBody } from '../../../src/core/wire.js';
import { diverge } from '../../../src/core/diverge.js';
import { chainOf } from '../../../src/core/chain.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('wire bodies', () => {
  const first = JSON.stringify({
    model: 'claude-sonnet-4-5',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    tools: [{ name: 'read', input_schema: {} }],
    thinking: { type: 'disabled' },
  });

  it('splits tools, system, messages and cuts cache markers out of the block bytes', () => {
    const w = parseWireBody(enc(first));
    assert.equal(w.api, 'anthropic-messages');
    assert.deepEqual(w.blocks.map((b) => `${b.segment}:${b.path}`), ['tools:tools[0]', 'system:system[0]', 'messages:messages[0].content[0]']);
    const sys = w.blocks[1];
    assert.equal(new TextDecoder().decode(sys.bytes), '{"type":"text","text":"sys"}');
    assert.deepEqual(sys.breakpoint, { ttlSeconds: 3600 });
    assert.equal(w.params.thinking, '{"type":"disabled"}');
  });

  it('locates a break at the exact body byte offset even after a stripped marker', () => {
    const second = first.replace('"text":"hi"', '"text":"ho"');
    const a = chainOf(parseWireBody(enc(first)).blocks);
    const b = chainOf(parseWireBody(enc(second)).blocks);
    const bp = diverge(a, b)!;
    assert.equal(bp.segment, 'messages');
    assert.equal(bp.blockIndex, 0);
    assert.equal(bp.path, 'messages[0].content[0].text');
    assert.equal(bp.byteOffset, second.indexOf('ho') + 1);
  });

  it('a top-level cache_control (automatic caching) is a breakpoint on the last block', () => {
    const auto = JSON.stringify({ ...JSON.parse(first), cache_control: { type: 'ephemeral' } }).replace(',"cache_control":{"type":"ephemeral"}}]}]', '}]}]');
    const w = parseWireBody(enc(auto));
    const lastBlock = w.blocks[w.blocks.length - 1];
    assert.equal(lastBlock.path, 'messages[0].content[0]');
    assert.deepEqual(lastBlock.breakpoint, { ttlSeconds: 300 });
  });

  it('does not see a moved cache marker as a change', () => {
    const moved = first.replace(',"cache_control":{"type":"ephemeral"}}]}]', '}]}]');
    assert.equal(diverge(chainOf(parseWireBody(enc(first)).blocks), chainOf(parseWireBody(enc(moved)).blocks)), null);
  });

  it('detects the API from the body keys when the caller does not name it', () => {
    const api = (o: unknown) => parseWireBody(enc(JSON.stringify(o))).api;
    assert.equal(api({ model: 'gpt-5', input: [] }), 'openai-responses');
    assert.equal(api({ model: 'claude', system: 'sys', messages: [] }), 'anthropic-messages');
    assert.equal(api({ model: 'claude', tools: [{ name: 'read', input_schema: {} }], messages: [] }), 'anthropic-messages');
    assert.equal(api({ model: 'gpt-4o', tools: [{ type: 'function', function: { name: 'read' } }], messages: [{ role: 'system', content: 's' }] }), 'openai-completions');
  });
});
