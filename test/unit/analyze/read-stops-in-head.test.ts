/**
 * readStopsInHead: a read that stops inside an opaque head is evidence of a head change only
 * when an expectation says the read should have gone past it. No expectation (null) is no
 * evidence, as an expectation of 0 (no live entry reachable): both false, whatever was read.
 */
import assert from 'node:assert/strict';
import { readStopsInHead, type TokensAt } from '../../../src/core/analyze.js';
import { chainOf } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { defaultRules } from '../../../src/core/rules.js';
import { messageBlocks, opaqueHeadBlock } from '../../../src/core/wire.js';

describe('readStopsInHead', () => {
  const family = defaultRules.families.find((f) => f.id === 'anthropic')!;
  const tail = chainOf([opaqueHeadBlock('head'), ...messageBlocks(0, 'messages[0]', { role: 'user', content: 'hi' })])!;
  const req = { tail } as LlmRequest;
  // 1,000 tokens per block: the head is ~1,000 tokens, the request ~2,000.
  const tokensAt: TokensAt = (n) => (n ? 1000 * n.depth : 0);
  const stops = (observed: number | null, expected: number | null) => readStopsInHead(req, observed, expected, tokensAt, family);

  it('no expectation, or one of 0: false (nothing says the read should have gone past the head)', () => {
    assert.deepEqual([stops(0, null), stops(500, null), stops(0, 0), stops(500, 0)], [false, false, false, false]);
  });

  it('an expectation past the head and a read short of the head by more than 2 %: true; within it, or without usage: false', () => {
    assert.deepEqual([stops(0, 2000), stops(500, 2000), stops(979, 2000), stops(981, 2000), stops(null, 2000)], [true, true, true, false, false]);
  });

  it('an expectation inside the head bounds it: a read short of that expectation by more than 2 %', () => {
    assert.deepEqual([stops(400, 600), stops(590, 600)], [true, false]);
  });
});
