import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { ccRequests } from '../../../src/hosts/claude-code/normalize.js';
import type { CcRead, CcRec } from '../../../src/hosts/claude-code/read.js';

/** Every block of a request's chain, head first, with its hash. */
function chainOf(r: LlmRequest): unknown[] {
  const out: unknown[] = [];
  for (let n: BlockNode | null = r.tail ?? null; n; n = n.prev) out.push([n.hashHex, n.block.segment, n.block.path, n.block.text]);
  return out.reverse();
}

const built = (read: CcRead, fromHead: boolean) => {
  const { requests, diagnostics } = ccRequests(read, { subagent: false, progressCopies: true, fromHead });
  return { requests: requests.map((r) => ({ ...r, tail: chainOf(r) })), diagnostics };
};

const lineArb = fc.record({
  type: fc.constantFrom('user', 'user', 'assistant', 'assistant', 'assistant', 'system', 'attachment'),
  // The parent: the line before (most lines), an earlier one (a branch), none, a missing uuid, a later line (out of order; cycles).
  parent: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.integer({ min: 2, max: 8 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -1, -2) }),
  text: fc.constantFrom('Read a.ts', 'It exports a.', '', '“quoted”\ttab'),
  stringContent: fc.boolean(),
  newResponse: fc.boolean(),
  sidechain: fc.boolean(),
});
type Line = typeof lineArb extends fc.Arbitrary<infer T> ? T : never;

/** A transcript of an older Claude Code version (no api-request lines): a uuid tree of user, assistant, system and attachment lines. */
function transcript(lines: Line[]): CcRead {
  const recs: CcRec[] = [];
  let response = 0;
  lines.forEach((l, i) => {
    const uuid = `u${i}`;
    const parentUuid = l.parent === 0 ? null : l.parent === -1 ? 'missing' : l.parent === -2 ? `u${i + 2}` : i - l.parent >= 0 ? `u${i - l.parent}` : null;
    const timestamp = new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString();
    const base = { uuid, parentUuid, timestamp, isSidechain: l.sidechain };
    if (l.type === 'user') recs.push({ line: i + 1, type: 'user', v: { ...base, type: 'user', message: { role: 'user', content: l.stringContent ? l.text : [{ type: 'tool_result', tool_use_id: `t${i}`, content: l.text }] } } as never });
    else if (l.type === 'assistant') {
      if (l.newResponse || response === 0) response++;
      recs.push({ line: i + 1, type: 'assistant', v: { ...base, type: 'assistant', requestId: `rq${response}`, message: { id: `msg${response}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: `${l.text} ${i}` }], usage: { input_tokens: 3, cache_read_input_tokens: 10 * i, output_tokens: i } } } as never });
    } else if (l.type === 'system') recs.push({ line: i + 1, type: 'system', v: { ...base, type: 'system', subtype: 'informational' } as never });
    else recs.push({ line: i + 1, type: 'node', v: { uuid, parentUuid, type: 'attachment' } });
  });
  return { file: '/old.jsonl', recs, diagnostics: [], ignored: {}, sessionId: 'old', version: '2.0.14', entrypoint: 'cli' };
}

describe('Claude Code uuid-tree replay (versions without api-request lines)', () => {
  it('continuing from the lines already walked equals every path replayed from the root (branches, missing and later parents, cycles, merged same-role lines)', () => {
    let requests = 0;
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 30 }), (lines) => {
        const read = transcript(lines);
        const fast = built(read, false);
        assert.deepEqual(fast, built(read, true));
        requests += fast.requests.length;
      }),
      { numRuns: 1500 },
    );
    assert.ok(requests > 2000, `${requests} requests compared`);
  });
});
