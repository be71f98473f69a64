/**
 * The same text sent in another encoding (a message's one text block sent as a string) is a
 * break only when the provider's read says so: a read past the change means it renders both
 * encodings as one prompt (recorded Pi bodies, edited the way Claude Code resends a notification).
 */
import assert from 'node:assert/strict';
import { analyzeSession, type RequestAnalysis } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const asString = (b: any) => (b.messages[10].content = b.messages[10].content[0].text);

async function second(editMeta?: (meta: any) => void): Promise<RequestAnalysis> {
  const dir = captureDir(PI_MAIN, [['006-anthropic-messages'], ['007-anthropic-messages', asString, editMeta]]);
  return analyzeSession(await readCaptureSession(dir)).requests[1];
}

describe('the same text in another encoding, judged by the provider read', () => {
  it('read past the change (2,451 tokens, all of the entry #1 wrote): a hit, the cause kept as likely', async () => {
    const r = await second();
    assert.equal(r.verdict, 'hit');
    assert.equal(r.break, null);
    assert.equal(r.observedRead, 2451);
    assert.equal(r.lostTokens, 0);
    assert.deepEqual(r.causes, [
      {
        kind: 'representation-only',
        detail: 'same text, other encoding at message 10 (the provider still read the cache past it: 2451 tokens read, ~1486 expected up to the change)',
        certainty: 'likely',
        representation: 'other-encoding',
      },
    ]);
  });

  it('nothing read: a break at message 10, certain', async () => {
    const r = await second((m) => Object.assign(m.usage, { cache_read_input_tokens: 0, cache_creation_input_tokens: 2622 }));
    assert.equal(r.verdict, 'break');
    assert.deepEqual([r.break?.segment, r.break?.blockIndex], ['messages', 10]);
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty]), [['representation-only', 'certain']]);
    assert.ok(r.lostTokens > 0, `lost ${r.lostTokens}`);
  });

  it('no usage recorded: the break stands', async () => {
    const r = await second((m) => (m.usage = null));
    assert.equal(r.verdict, 'break');
    assert.equal(r.break?.blockIndex, 10);
  });

  it('keys on the cause`s representation, not its words: the same values in another key order, read past, stay a break', async () => {
    // Request 007 re-sends message 3's tool_use input with its keys in another order; the
    // provider's recorded read (2451 tokens) goes past it, as in the encoding case above.
    const input = (value: Record<string, unknown>) => (b: any) => (b.messages[3].content[1].input = value);
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', input({ path: 'hello.txt', offset: 1 })],
      ['007-anthropic-messages', input({ offset: 1, path: 'hello.txt' })],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.equal(r.observedRead, 2451);
    assert.equal(r.verdict, 'break');
    assert.deepEqual([r.break?.segment, r.break?.blockIndex, r.break?.path], ['messages', 3, 'messages[3].content[1].input']);
    assert.deepEqual(r.causes, [{ kind: 'representation-only', detail: 'same values in another key order at message 3', certainty: 'certain', representation: 'key-order' }]);
  });
});
