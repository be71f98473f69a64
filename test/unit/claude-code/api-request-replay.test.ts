import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { canonicalHash, ccRequests } from '../../../src/hosts/claude-code/normalize.js';
import { readCcFile, type CcRead, type CcRec } from '../../../src/hosts/claude-code/read.js';

/** Every block of a request's chain, head first, with what the judge reads of it. */
function chainOf(r: LlmRequest): unknown[] {
  const out: unknown[] = [];
  for (let n: BlockNode | null = r.tail ?? null; n; n = n.prev) {
    const b = n.block;
    out.push([n.hashHex, b.segment, b.item, b.path, b.text, b.breakpoint?.ttlSeconds ?? null, b.origin ?? null]);
  }
  return out.reverse();
}

/** The requests as the judge sees them: chains, notes, usage, errors; and the diagnostics. */
function built(read: CcRead, fromHead: boolean) {
  const { requests, diagnostics } = ccRequests(read, { subagent: false, progressCopies: true, fromHead });
  return { requests: requests.map((r) => ({ ...r, tail: chainOf(r) })), diagnostics };
}

const SUMMARY = 'This session is being continued from a previous conversation. Summary: files 1–3 read.';
/** Message blobs of the generated sessions: a one-text-block user message (sent as a string when unmarked), two blocks, assistant, tool result, a compaction summary. */
const MESSAGES: Array<Record<string, unknown>> = [
  { role: 'user', content: [{ type: 'text', text: 'Read src/a.ts and explain it.' }] },
  { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nctx\n</system-reminder>' }, { type: 'text', text: 'Then b.ts — “quoted”.' }] },
  { role: 'assistant', content: [{ type: 'text', text: "I'll read it." }, { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/p/a.ts' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '1\tconst a = 1;\n2\texport { a };' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'It exports a.' }] },
  { role: 'user', content: [{ type: 'text', text: SUMMARY }] },
];
const HASHES = [...MESSAGES.map(canonicalHash), 'f'.repeat(64) /* names no blob */];
const SHAPE = { tools: [{ name: 'Read', input_schema: { type: 'object' } }, { name: 'Bash' }], system: [{ type: 'text', text: 'You are Claude Code.' }, { type: 'text', text: 'cwd: /p' }] };

const requestArb = fc.record({
  keep: fc.integer({ min: 0, max: 14 }),
  tail: fc.array(fc.integer({ min: 0, max: HASHES.length - 1 }), { maxLength: 4 }),
  shape: fc.constantFrom('s1', 's1', 's1', 's2', 'absent'),
  marks: fc.array(
    fc.oneof(
      fc.record({ path: fc.tuple(fc.constant('messages'), fc.integer({ min: 0, max: 14 }), fc.constant('content'), fc.integer({ min: 0, max: 2 })), ttl: fc.constantFrom(undefined, '1h') }),
      fc.record({ path: fc.tuple(fc.constantFrom('system', 'tools'), fc.integer({ min: 0, max: 2 })), ttl: fc.constantFrom(undefined, '1h') }),
      fc.record({ path: fc.constant(['messages', 'x']), ttl: fc.constant(undefined) }),
    ),
    { maxLength: 4 },
  ),
  answered: fc.boolean(),
});
type Step = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

/** A transcript of api-request lines (with their blobs, shapes and responses) from generated steps. */
function session(steps: Step[], summary: boolean): CcRead {
  const recs: CcRec[] = [];
  let line = 0;
  const add = (r: Omit<CcRec, 'line'>) => recs.push({ ...r, line: ++line } as CcRec);
  for (const h of ['s1', 's2']) add({ type: 'api-request-shape', v: { type: 'api-request-shape', shapeHash: h, shape: h === 's1' ? SHAPE : { ...SHAPE, tools: SHAPE.tools.slice(1) } } });
  MESSAGES.forEach((message, i) => add({ type: 'api-request-blob', v: { type: 'api-request-blob', hash: HASHES[i], message } as never }));
  if (summary) add({ type: 'user', v: { type: 'user', uuid: 'u-summary', parentUuid: null, isCompactSummary: true, message: { role: 'user', content: SUMMARY } } as never });
  steps.forEach((s, i) => {
    const id = `req-${i}`;
    const cacheControl = s.marks.map((m) => ({ path: m.path as Array<string | number>, value: m.ttl ? { type: 'ephemeral', ttl: m.ttl } : { type: 'ephemeral' } }));
    add({ type: 'api-request', v: { type: 'api-request', id, timestamp: new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString(), shapeHash: s.shape, params: { model: 'claude-sonnet-4-5' }, keep: s.keep, tail: s.tail.map((t) => HASHES[t]), cacheControl } });
    if (s.answered)
      add({ type: 'assistant', v: { type: 'assistant', uuid: `a-${i}`, parentUuid: null, requestId: `rq-${i}`, requestRef: id, timestamp: new Date(Date.UTC(2026, 11, 1, 9, 0, i, 500)).toISOString(), message: { id: `msg-${i}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: `answer ${i}` }], usage: { input_tokens: 3, cache_read_input_tokens: 100 * i, cache_creation_input_tokens: 20, output_tokens: 5 } } } as never });
  });
  return { file: '/gen.jsonl', recs, diagnostics: [], ignored: {}, sessionId: 'gen', version: '2.1.328', entrypoint: 'cli' };
}

describe('Claude Code api-request replay (each request continues the previous one’s chain)', () => {
  it('equals every chain built from its head on generated sessions (keep, tails, missing blobs and shapes, moving and odd cache marks, a compaction summary)', () => {
    fc.assert(
      fc.property(fc.array(requestArb, { minLength: 1, maxLength: 14 }), fc.boolean(), (steps, summary) => {
        const read = session(steps, summary);
        assert.deepEqual(built(read, false), built(read, true));
      }),
      { numRuns: 1500 },
    );
  });

  it('equals every chain built from its head on the recordings (main sessions and sub-agents)', async () => {
    const files: string[] = [];
    for (const rec of ['claude-code', 'claude-code-autocompact']) {
      const walk = (d: string): void => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          if (e.isDirectory()) walk(join(d, e.name));
          else if (e.name.endsWith('.jsonl')) files.push(join(d, e.name));
        }
      };
      walk(join('test/fixtures', rec, 'claude'));
    }
    assert.equal(files.length, 3);
    let requests = 0;
    for (const f of files) {
      const read = await readCcFile(f);
      const fast = built(read, false);
      assert.deepEqual(fast, built(read, true), f);
      requests += fast.requests.length;
    }
    assert.equal(requests, 17);
  });
});
