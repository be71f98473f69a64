/**
 * A historical tool call sent again with the same values in another key order is
 * representation-only; a tool call whose values changed is a history rewrite, also when the
 * assistant text around it is empty (recorded Pi bodies, edited the way hosts re-serialize them).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

async function causes(steps: Parameters<typeof captureDir>[1]): Promise<string[]> {
  const r = analyzeSession(await readCaptureSession(captureDir(PI_MAIN, steps))).requests[1];
  return r.causes.map((c) => `${c.kind}: ${c.detail}`);
}

describe('review: re-serialized tool calls', () => {
  it('Anthropic tool_use input with the same values in another key order: representation-only (was: history-rewritten)', async () => {
    const input = (value: Record<string, unknown>) => (b: any) => (b.messages[3].content[1].input = value);
    assert.deepEqual(
      await causes([
        ['006-anthropic-messages', input({ path: 'hello.txt', offset: 1 })],
        ['007-anthropic-messages', input({ offset: 1, path: 'hello.txt' })],
      ]),
      ['representation-only: same values in another key order at message 3'],
    );
  });

  it('Chat Completions arguments JSON re-keyed: representation-only', async () => {
    const args = (json: string) => (b: any) => (b.messages[4].tool_calls[0].function.arguments = json);
    assert.deepEqual(
      await causes([
        ['003-openai-completions', args('{"path":"hello.txt","limit":20}')],
        ['004-openai-completions', args('{"limit":20,"path":"hello.txt"}')],
      ]),
      ['representation-only: same values in another key order at message 3'],
    );
  });

  it('a changed tool-call value with empty assistant text is a history rewrite (was: representation-only)', async () => {
    const call = (path: string) => (b: any) => {
      b.messages[4].content = '';
      b.messages[4].tool_calls[0].function.arguments = JSON.stringify({ path });
    };
    assert.deepEqual(await causes([['003-openai-completions', call('hello.txt')], ['004-openai-completions', call('notes.md')]]), ['history-rewritten: edit at message 3']);
  });

  it('the same text sent as a string instead of a text part is still representation-only', async () => {
    const asString = (b: any) => (b.messages[3].content = b.messages[3].content[0].text);
    assert.deepEqual(await causes([['004-openai-completions'], ['004-openai-completions', asString]]), ['representation-only: same text, other encoding at message 2']);
  });
});
