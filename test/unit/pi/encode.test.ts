import assert from 'node:assert/strict';
import { join } from 'node:path';
import { blocksOf, type BlockNode } from '../../../src/core/chain.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { HEAD_NOTE } from '../../../src/hosts/pi/normalize.js';
import {
  HEADER,
  assistant,
  cleanup,
  entry,
  messageBlocksOf,
  messageCount,
  messageText,
  tempDir,
  toolCall,
  toolResult,
  user,
  writeJsonl,
} from './helpers.js';

/** Nodes of `tail` not reachable from `other` (by identity). */
function ownNodes(tail: BlockNode | null, other: BlockNode | null): number {
  const shared = new Set<BlockNode>();
  for (let n = other; n; n = n.prev) shared.add(n);
  let k = 0;
  for (let n = tail; n && !shared.has(n); n = n.prev) k++;
  return k;
}

const GPT = { api: 'openai-completions', provider: 'openai', model: 'gpt-5' };
const RESP = { api: 'openai-responses', provider: 'openai', model: 'gpt-5' };

describe('pi normalize: per-API message encoding (synthetic sessions)', () => {
  let dir: string;
  before(async () => (dir = await tempDir()));
  after(async () => cleanup(dir));

  it('anthropic: parallel tool results merge into one user message; the breakpoint is on its last block; chains share nodes', async () => {
    const f = join(dir, 'parallel.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'Read both'),
      assistant('a1', 'u1', [toolCall('t1'), toolCall('t2', 'read', { path: 'b.txt' })], { stopReason: 'toolUse' }),
      toolResult('r1', 'a1', 't1', 'A'),
      toolResult('r2', 'r1', 't2', 'B'),
      assistant('a2', 'r2', 'Done'),
      user('u2', 'a2', 'Next'),
      assistant('a3', 'u2', 'OK'),
    ]);
    const s = await readPiSession(f);
    const [, r2, r3] = s.requests;
    assert.equal(messageCount(r2.tail), 3);
    assert.equal(
      messageText(r2.tail, 2),
      '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"A","is_error":false},{"type":"tool_result","tool_use_id":"t2","content":"B","is_error":false}]}',
    );
    const m2 = messageBlocksOf(r2.tail);
    assert.deepEqual(
      m2.map((b) => [b.path, b.breakpoint?.ttlSeconds ?? null]),
      [
        ['messages[0].content[0]', null],
        ['messages[1].content[0]', null],
        ['messages[1].content[1]', null],
        ['messages[2].content[0]', null],
        ['messages[2].content[1]', 300],
      ],
    );
    assert.deepEqual(blocksOf(r2.tail)[0].breakpoint, { ttlSeconds: 300 });
    assert.equal(r2.notes?.[0], HEAD_NOTE);
    // Request 3 = request 2's messages + assistant + user: only the breakpoint copy of request 2's
    // tail block is not shared; request 3 adds 3 blocks of its own.
    assert.equal(messageCount(r3.tail), 5);
    assert.equal(ownNodes(r3.tail, r2.tail), 3);
    assert.equal(ownNodes(r2.tail, r3.tail), 1);
    assert.equal(blocksOf(r3.tail)[4].breakpoint, undefined);
  });

  it('completions: an orphaned tool call gets a synthetic "No result provided" tool message before the next user message', async () => {
    const f = join(dir, 'orphan.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'Go'),
      assistant('a1', 'u1', [toolCall('c1')], { ...GPT, stopReason: 'toolUse' }),
      user('u2', 'a1', 'Never mind'),
      assistant('a2', 'u2', 'OK', GPT),
    ]);
    const s = await readPiSession(f);
    const t = s.requests[1].tail;
    assert.equal(messageCount(t), 4);
    assert.equal(messageText(t, 1), '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}}]}');
    assert.equal(messageText(t, 2), '{"role":"tool","content":"No result provided","tool_call_id":"c1"}');
    assert.equal(messageBlocksOf(t)[0].path, 'messages[1].content[0]');
    assert.equal(messageBlocksOf(t)[1].path, 'messages[2]');
  });

  it('an errored assistant is a request with its error and no usage, and is dropped from later requests', async () => {
    const f = join(dir, 'error.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'FAIL500 once please'),
      assistant('e1', 'u1', [], { stopReason: 'error', errorMessage: '500 {"type":"error"}', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }),
      assistant('a1', 'e1', 'Recovered', { responseId: 'msg_2' }),
    ]);
    const s = await readPiSession(f);
    const [err, retry] = s.requests;
    assert.equal(err.error, '500 {"type":"error"}');
    assert.equal(err.usage, null);
    assert.equal(retry.error, undefined);
    assert.equal(retry.responseId, 'msg_2');
    assert.equal(messageCount(retry.tail), 1);
    assert.equal(retry.tail!.shortHash, err.tail!.shortHash);
  });

  it('anthropic: a string user content becomes a block array only where it carries the breakpoint', async () => {
    const f = join(dir, 'string.jsonl');
    await writeJsonl(f, [
      HEADER,
      entry('u1', null, 'message', { message: { role: 'user', content: 'plain', timestamp: 1 } }),
      assistant('a1', 'u1', 'Hi'),
      user('u2', 'a1', 'Again'),
      assistant('a2', 'u2', 'Hi again'),
    ]);
    const s = await readPiSession(f);
    assert.equal(messageText(s.requests[0].tail, 0), '{"role":"user","content":[{"type":"text","text":"plain"}]}');
    assert.equal(messageBlocksOf(s.requests[0].tail)[0].breakpoint?.ttlSeconds, 300);
    assert.equal(messageText(s.requests[1].tail, 0), '{"role":"user","content":"plain"}');
  });

  it('responses: foreign assistant text gets msg_<index>, a foreign tool call has no item id, results become function_call_output', async () => {
    const f = join(dir, 'responses.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'Read it'),
      assistant('a1', 'u1', [{ type: 'text', text: 'Reading' }, toolCall('toolu_1')], { stopReason: 'toolUse' }),
      toolResult('r1', 'a1', 'toolu_1', 'content'),
      assistant('a2', 'r1', 'Done', RESP),
    ]);
    const s = await readPiSession(f);
    const t = s.requests[1].tail;
    assert.equal(s.requests[1].cacheKey, HEADER.id);
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => messageText(t, i)),
      [
        '{"role":"user","content":[{"type":"input_text","text":"Read it"}]}',
        '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading","annotations":[]}],"status":"completed","id":"msg_1"}',
        '{"type":"function_call","call_id":"toolu_1","name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}',
        '{"type":"function_call_output","call_id":"toolu_1","output":"content"}',
      ],
    );
    assert.deepEqual(
      messageBlocksOf(t).map((b) => b.path),
      ['input[1].content[0]', 'input[2].content[0]', 'input[3]', 'input[4]'],
    );
  });

  it('a compaction starts a new chain from the shared head node', async () => {
    const f = join(dir, 'compaction.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'one'),
      assistant('a1', 'u1', 'ONE'),
      user('u2', 'a1', 'two'),
      assistant('a2', 'u2', 'TWO'),
      entry('c1', 'a2', 'compaction', { summary: 'sum', firstKeptEntryId: 'u2', tokensBefore: 100 }),
      user('u3', 'c1', 'three'),
      assistant('a3', 'u3', 'THREE'),
    ]);
    const s = await readPiSession(f);
    const [r1, r2, r3] = s.requests;
    assert.deepEqual(
      messageBlocksOf(r3.tail).map((b) => b.origin ?? null),
      ['compaction-summary', null, null, null],
    );
    assert.equal(ownNodes(r3.tail, r2.tail), r3.tail!.depth - 1);
    assert.equal(blocksOf(r3.tail)[0], r1.tail!.at(1)!.block);
    assert.equal(r3.tail!.at(1), r1.tail!.at(1));
  });

  it('events: phux context messages, compaction and tree movement in file order', async () => {
    const f = join(dir, 'events.jsonl');
    await writeJsonl(f, [
      HEADER,
      user('u1', null, 'one'),
      entry('p1', 'u1', 'custom_message', { customType: 'phux-context', content: '<phux-context version="1" kind="checkpoint" seq="1">\n{}\n</phux-context>', display: false }),
      assistant('a1', 'p1', 'ONE'),
      user('u2', 'u1', 'elsewhere'),
      assistant('a2', 'u2', 'TWO'),
      entry('b1', 'a1', 'branch_summary', { fromId: 'a1', summary: 'went away' }),
    ]);
    const s = await readPiSession(f);
    assert.deepEqual(
      s.events.map((e) => [e.kind, e.line]),
      [
        ['context', 3],
        ['branch', 5],
        ['branch', 7],
      ],
    );
    const ctx = s.events[0];
    assert.equal(ctx.kind === 'context' && ctx.placement, 'tail');
    assert.deepEqual(
      messageBlocksOf(s.requests[0].tail).map((b) => b.origin ?? null),
      [null, 'phux-context'],
    );
  });

  it('stays linear: 3000 turns share one chain, each request adds only its new blocks', async () => {
    const f = join(dir, 'long.jsonl');
    const lines: object[] = [HEADER];
    let parent: string | null = null;
    for (let i = 0; i < 3000; i++) {
      lines.push(user(`u${i}`, parent, `prompt ${i}`));
      lines.push(assistant(`a${i}`, `u${i}`, `answer ${i}`));
      parent = `a${i}`;
    }
    await writeJsonl(f, lines);
    const s = await readPiSession(f);
    assert.equal(s.requests.length, 3000);
    assert.equal(messageCount(s.requests[2999].tail), 5999);
    const seen = new Set<BlockNode>();
    for (const r of s.requests) for (let n = r.tail; n && !seen.has(n); n = n.prev) seen.add(n);
    // head + user and assistant block of every turn but the last + one breakpoint copy per request
    assert.equal(seen.size, 1 + 2 * 2999 + 3000);
  });
});
