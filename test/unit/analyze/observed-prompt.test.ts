/**
 * An entry's own reported prompt decides what it cached, not the byte estimate: after a
 * compaction the new, short conversation is cached (1520 reported tokens) even when the session's
 * byte→token fit, dominated by the long history before, puts it under the 1024-token minimum.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { append, type BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest, Session } from '../../../src/core/model.js';
import { messageBlocks, opaqueHeadBlock } from '../../../src/core/wire.js';

function request(index: number, tail: BlockNode, read: number, write: number, timeMs: number): LlmRequest {
  return {
    index,
    source: { file: 's.jsonl', line: index },
    provider: 'openai',
    model: 'gpt-5',
    api: 'openai-completions',
    kind: 'agent',
    timeMs,
    evidence: 'reconstructed',
    usage: { uncached: 0, cacheRead: read, cacheWrite: write, output: 10 },
    tail,
    params: {},
  };
}

describe('observed prompts bound the estimates', () => {
  it('the turn after a compaction reads the compaction request\'s entry', () => {
    const head = append(null, opaqueHeadBlock('test:head'));
    const say = (prev: BlockNode, i: number, text: string) =>
      messageBlocks(i, `messages[${i + 1}]`, { role: 'user', content: [{ type: 'text', text }] }).reduce<BlockNode>((n, b) => append(n, b), prev);
    // A long history: ~4 bytes per token, prompts in the hundreds of thousands of tokens.
    const requests: LlmRequest[] = [];
    let tail = head;
    let prompt = 0;
    for (let i = 0; i < 5; i++) {
      tail = say(tail, i, 'x'.repeat(400_000));
      const next = Math.round(tail.bytesThrough / 4) + 1500;
      requests.push(request(i + 1, tail, prompt, next - prompt, i * 1000));
      prompt = next;
    }
    // Compaction: a 300-byte summary on the same head; the provider reports 1520 tokens (head ~1450).
    const compacted = say(head, 0, 'summary '.repeat(36));
    requests.push(request(6, compacted, 1408, 112, 6000));
    const next = say(compacted, 1, 'and then?');
    requests.push(request(7, next, 1408, 120, 7000));
    const session: Session = { host: 'test', id: 's', path: 's.jsonl', requests, diagnostics: [], ignored: {}, events: [] };
    const a = analyzeSession(session);
    assert.equal(a.requests[5].verdict, 'break');
    assert.equal(a.requests[6].matched, 6);
    assert.equal(a.requests[6].verdict, 'hit');
    assert.equal(a.requests[6].expectedRead, 1408);
  });
});
