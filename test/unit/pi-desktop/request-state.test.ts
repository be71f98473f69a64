import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import type { RouteCompat } from '../../../src/hosts/pi-desktop/db.js';
import { normalizePd, readPdTranscript, type PdRead } from '../../../src/hosts/pi-desktop/index.js';
import { keepBytes, messageBlocks } from '../../../src/core/wire.js';
import { BlockNode as Node } from '../../../src/core/chain.js';
import { piDesktopLines } from '../../../scripts/bench/pi-desktop-session.js';
import { HOME } from './helpers.js';

/** Every block of a chain, head first: hash, place, bytes, breakpoint, origin. */
function blocks(tail: BlockNode | null | undefined): unknown[] {
  const out: unknown[] = [];
  for (let n = tail ?? null; n; n = n.prev) out.push([n.hashHex, n.block.segment, n.block.item, n.block.path, n.block.text, n.block.breakpoint?.ttlSeconds ?? null, n.block.origin ?? null]);
  return out.reverse();
}

/** A request as the judge and the report read it (both shapes' chains included). */
const view = (r: LlmRequest) => ({ ...r, tail: blocks(r.tail), systemShape: r.systemShape && { ...r.systemShape, alternate: blocks(r.systemShape.alternate) } });

const ROUTES: Record<string, RouteCompat> = {
  'deepseek/deepseek-v4-flash': { supportsMidConvoSystemMessages: true, source: 'test' },
  'anthropic/claude-sonnet-4-5': { supportsMidConvoSystemMessages: false, source: 'test' },
};
const route = (p: string, m: string) => ROUTES[`${p}/${m}`];

/** The requests with the state carried from request to request equal those built from scratch for each (normalizePd fromScratch). */
function assertAsFromScratch(read: PdRead): number {
  const carried = normalizePd(read, route, undefined, false);
  const scratch = normalizePd(read, route, undefined, true);
  assert.deepEqual(carried.requests.map(view), scratch.requests.map(view));
  assert.deepEqual({ ...carried, requests: [] }, { ...scratch, requests: [] });
  return carried.requests.length;
}

const at = (i: number) => new Date(Date.UTC(2026, 10, 20, 9, 0, 0) + i * 1000).toISOString();
const MODELS = [
  { providerId: 'relay', modelId: 'deepseek-chat' },
  { providerId: 'deepseek', modelId: 'deepseek-v4-flash' },
  { providerId: 'anthropic', modelId: 'claude-sonnet-4-5' },
];
const stepArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('turn' as const), tool: fc.boolean(), model: fc.integer({ min: 0, max: 2 }), error: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('system' as const),
      content: fc.constantFrom('', 'Be brief.'),
      section: fc.constantFrom('runtime', 'skills', 'skill:b', 'context_budget', 'resumable'),
      value: fc.constantFrom('one', 'two', null),
      tool: fc.constantFrom(undefined, 'Read', 'Grep'),
      removeTool: fc.boolean(),
      place: fc.constantFrom('none', 'none', 'before', 'after', 'after-missing'),
      back: fc.nat({ max: 6 }),
      repeat: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compaction' as const), keepBack: fc.option(fc.nat({ max: 4 }), { nil: undefined }), usage: fc.boolean(), checkpoint: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('subagent' as const), usage: fc.boolean() }) },
);
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** A PI-Desktop transcript (JSONL) from generated steps: turns, system deltas placed before/after a message, duplicates, compactions, sub-agent rows. */
function transcriptOf(steps: Step[]): string {
  const lines = [JSON.stringify({ type: 'session', schema: 1, sessionId: 'gen', createdAt: at(0) })];
  const ids: string[] = [];
  let t = 0;
  let lastSystem = '';
  const sys = (id: string, message: object, extra: object = {}) => {
    const messageJson = JSON.stringify(message);
    lastSystem = messageJson;
    return JSON.stringify({ type: 'message', id, role: 'system', blocks: [], createdAt: at(++t), modelSystem: { version: 1, messageJson, ...extra } });
  };
  lines.push(sys('sys-0', { role: 'system', content: 'You are PI.', sections: { runtime: 'r0' }, toolsAdded: [{ name: 'Read' }] }));
  steps.forEach((s, n) => {
    if (s.kind === 'turn') {
      const m = MODELS[s.model];
      lines.push(JSON.stringify({ type: 'message', id: `u${n}`, role: 'user', blocks: [{ type: 'text', text: `Turn ${n}.` }], createdAt: at(++t) }));
      ids.push(`u${n}`);
      if (s.tool) {
        lines.push(JSON.stringify({ type: 'message', id: `t${n}`, role: 'tool', toolName: 'Read', blocks: [{ type: 'tool_call', callId: `c${n}`, args: { path: `f${n}` }, result: `r${n}`, status: 'success' }], createdAt: at(++t) }));
        ids.push(`t${n}`);
      }
      const meta = { ...m, usage: { inputTokens: 50, outputTokens: 5, cacheReadTokens: 10 * n, cacheWriteTokens: 3 }, ...(s.error ? { status: 'error', error: 'HTTP 500' } : {}) };
      lines.push(JSON.stringify({ type: 'message', id: `a${n}`, role: 'assistant', blocks: [{ type: 'text', text: `Done ${n}.` }], meta, createdAt: at(++t) }));
      ids.push(`a${n}`);
    } else if (s.kind === 'system') {
      if (s.repeat && lastSystem) {
        lines.push(JSON.stringify({ type: 'message', id: `dup${n}`, role: 'system', blocks: [], createdAt: at(++t), modelSystem: { version: 1, messageJson: lastSystem } }));
        return;
      }
      const target = ids[ids.length - 1 - Math.min(s.back, Math.max(ids.length - 1, 0))];
      const extra = s.place === 'before' && target ? { beforeMessageId: target } : s.place === 'after' && target ? { afterMessageId: target } : s.place === 'after-missing' ? { afterMessageId: 'gone' } : {};
      const message = { role: 'system', content: s.content, timestamp: n, sections: { [s.section]: s.value }, ...(s.tool ? (s.removeTool ? { toolsRemoved: [{ name: s.tool }] } : { toolsAdded: [{ name: s.tool, description: `${s.tool} files` }] }) : {}) };
      lines.push(sys(`sys${n}`, message, extra));
    } else if (s.kind === 'compaction') {
      const kept = s.keepBack !== undefined ? ids[ids.length - 1 - Math.min(s.keepBack, Math.max(ids.length - 1, 0))] : undefined;
      const details = s.checkpoint ? { systemMessageJson: JSON.stringify({ role: 'system', content: 'Checkpoint.', sections: { runtime: 'rc' } }) } : undefined;
      lines.push(JSON.stringify({ type: 'compaction', id: `cmp${n}`, summary: `Summary ${n}.`, ...(kept ? { firstKeptMessageId: kept } : {}), ...(s.usage ? { usage: { inputTokens: 90, outputTokens: 20 }, ...MODELS[0] } : {}), ...(details ? { details } : {}), createdAt: at(++t) }));
    } else {
      lines.push(JSON.stringify({ type: 'message', id: `s${n}`, role: 'assistant', blocks: [{ type: 'text', text: 'sub' }], meta: { parentToolCallId: 'task-1', agentName: 'explorer', ...MODELS[0], ...(s.usage ? { usage: { inputTokens: 7, outputTokens: 1 } } : {}) }, createdAt: at(++t) }));
    }
  });
  return lines.join('\n') + '\n';
}

describe('PI-Desktop requests: the state carried from request to request', () => {
  it('equals every request built from scratch (generated: deltas in place, duplicates, compactions, routes of both shapes)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pd-state-'));
    try {
      let n = 0;
      let requests = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 24 }), async (steps) => {
          const file = join(dir, `${n++}.jsonl`);
          writeFileSync(file, transcriptOf(steps));
          requests += assertAsFromScratch(await readPdTranscript(file));
        }),
        { numRuns: 300 },
      );
      assert.ok(requests > 800, `${requests} requests compared`); // 963–1131 in 7 runs
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("equals every request built from scratch on the scaling figures' sessions (a delta every 10th and every 3rd turn: each collapsed head hashes the conversation again from kept bytes)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pd-state-'));
    try {
      const counts: number[] = [];
      for (const every of [10, 3, 0]) {
        const file = join(dir, `bench-${every}.jsonl`);
        writeFileSync(file, piDesktopLines(120, every).join('\n') + '\n');
        counts.push(assertAsFromScratch(await readPdTranscript(file)));
      }
      assert.deepEqual(counts, [120, 120, 120]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a block whose bytes are kept (keepBytes) has the same text, bytes, size and hash', () => {
    const message = { role: 'toolResult', toolCallId: 'c1', toolName: 'Read', content: [{ type: 'text', text: 'ä “quoted” 😀 \ud800 tab\t' }, { type: 'text', text: 'x' }], isError: false };
    const look = (b: ReturnType<typeof messageBlocks>[number]) => {
      const n = new Node(null, b);
      return [b.text, Buffer.from(b.bytes).toString('base64'), n.size, n.hashHex, b.path, b.startPath ?? null];
    };
    const blocks = messageBlocks(3, 'messages[3]', message);
    const before = blocks.map(look);
    for (const b of blocks) keepBytes(b);
    assert.deepEqual(blocks.map(look), before);
    assert.equal(before.length, 2);
    // Kept, not serialized again: a change of the message afterwards no longer shows.
    message.content[0].text = 'changed';
    assert.deepEqual(blocks.map(look), before);
  });

  it('the same on every recorded transcript', async () => {
    const dir = join(HOME, 'sessions');
    const counts: number[] = [];
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl') && !x.endsWith('.revisions.jsonl')).sort()) counts.push(assertAsFromScratch(await readPdTranscript(join(dir, f))));
    assert.deepEqual(counts, [10, 3, 3]);
  });
});
