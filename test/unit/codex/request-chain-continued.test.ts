import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { codexRequests } from '../../../src/hosts/codex/normalize.js';
import { readCodexFile, type CxRead, type CxRec } from '../../../src/hosts/codex/read.js';
import { rollouts } from './helpers.js';

/** Every block of a request's chain, head first: hash, place, bytes, origin. */
function chainOf(r: LlmRequest): unknown[] {
  const out: unknown[] = [];
  for (let n: BlockNode | null = r.tail ?? null; n; n = n.prev) out.push([n.hashHex, n.block.segment, n.block.item, n.block.path, n.block.text, n.block.origin ?? null]);
  return out.reverse();
}

const built = (read: CxRead, base: CxRead | undefined, fromHead: boolean) => codexRequests(read, base, fromHead).map((r) => ({ ...r, tail: chainOf(r) }));

const ITEMS: Array<Record<string, unknown>> = [
  { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>read-only</permissions>' }] },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read hello.txt — “please”.' }] },
  { type: 'message', role: 'user', content: [] },
  { type: 'reasoning', summary: [], encrypted_content: 'gAAA' },
  { type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: "I'll read it.", annotations: [] }], internal_chat_message_metadata_passthrough: { turn_id: 't' } },
  { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"cat hello.txt"}', call_id: 'c1' },
  { type: 'function_call_output', call_id: 'c1', output: 'Hello\n' },
  { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'sys' }] },
];
const stepArb = fc.oneof(
  { weight: 8, arbitrary: fc.record({ type: fc.constant('item' as const), item: fc.integer({ min: 0, max: ITEMS.length - 1 }) }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('usage' as const) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('count' as const), repeat: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('turn' as const), model: fc.constantFrom('gpt-5', 'gpt-5-codex'), effort: fc.constantFrom(null, 'high') }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('compacted' as const), history: fc.array(fc.integer({ min: 0, max: ITEMS.length - 1 }), { maxLength: 4 }) }) },
);
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** A rollout read from generated steps (each item a new object, as each line parses to one). */
function rolloutOf(steps: Step[], usageRecords: boolean): CxRead {
  const recs: CxRec[] = [];
  let total = 0;
  steps.forEach((s, i) => {
    const line = i + 2;
    const time = new Date(Date.UTC(2026, 11, 1, 10, 0, i)).toISOString();
    const usage = { input_tokens: 100 + i, cached_input_tokens: 50, output_tokens: 3 };
    if (s.type === 'item') recs.push({ line, time, type: 'item', item: structuredClone(ITEMS[s.item]) });
    else if (s.type === 'usage') {
      if (usageRecords) recs.push({ line, time, type: 'usage', responseId: `resp_${i}`, usage });
    } else if (s.type === 'count') {
      if (!s.repeat) total += 100 + i;
      recs.push({ line, time, type: 'count', total: { input_tokens: total, cached_input_tokens: 50, output_tokens: total / 10 } });
    } else if (s.type === 'turn') recs.push({ line, time, type: 'turn', model: s.model, effort: s.effort });
    else recs.push({ line, time, type: 'compacted', history: s.history.map((h) => structuredClone(ITEMS[h])) });
  });
  return { file: '/gen/rollout.jsonl', meta: { id: 'gen', instructions: 'You are Codex.' } as CxRead['meta'], metaLine: 1, recs, diagnostics: [], ignored: {}, legacy: false };
}

describe('Codex requests: each continues the previous request’s chain', () => {
  it('equals every chain built from its head on generated rollouts (leading developer items, compactions, summary calls, token_count usage, a fork base)', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 30 }), fc.boolean(), fc.option(fc.array(stepArb, { maxLength: 8 }), { nil: undefined }), (steps, records, baseSteps) => {
        const read = rolloutOf(steps, records);
        const base = baseSteps && rolloutOf(baseSteps, records);
        assert.deepEqual(built(read, base, false), built(read, base, true));
      }),
      { numRuns: 2000 },
    );
  });

  it('the same on every recorded rollout', async () => {
    const counts: number[] = [];
    for (const dir of ['test/fixtures/codex', 'test/fixtures/codex-agents']) {
      for (const f of rollouts(dir)) {
        const read = await readCodexFile(f);
        const fast = built(read, undefined, false);
        assert.deepEqual(fast, built(read, undefined, true), f);
        counts.push(fast.length);
      }
    }
    assert.deepEqual(counts, [9, 4, 1, 2]);
  });
});
