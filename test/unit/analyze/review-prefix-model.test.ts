/**
 * The prefix model: every body field the provider caches as prefix is in the chain, in the
 * family's render order (provider-rules.json), in the tier where the provider renders it
 * (recorded Pi bodies, edited the way other hosts send them).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { blocksOf } from '../../../src/core/chain.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

/** Codex-style Responses body: the system prompt in `instructions` instead of a system input item. */
const toInstructions = (edit?: (s: string) => string) => (b: any) => {
  const system = b.input.shift();
  b.instructions = edit ? edit(system.content) : system.content;
};
const cached = (n: number) => (m: any) => (m.usage.input_tokens_details.cached_tokens = n);

async function second(steps: Parameters<typeof captureDir>[1]) {
  return analyzeSession(await readCaptureSession(captureDir(PI_MAIN, steps))).requests[1];
}

describe('review: the prefix model', () => {
  it('Responses `instructions` are the system prompt: a change there is a system break, not an unexplained miss', async () => {
    const r = await second([
      ['014-openai-responses', toInstructions()],
      ['015-openai-responses', toInstructions((s) => s.replace('Current date: ', 'Current date (UTC): ')), cached(0)],
    ]);
    assert.equal(r.verdict, 'break');
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.path], ['system', 0, 'instructions']);
    assert.equal(r.causes[0].kind, 'system-changed');
    assert.match(r.causes[0].detail, /^block 0, line \d+: Current date \(UTC\): /);
    // The chain renders tools, then instructions, then the input items.
    assert.deepEqual(blocksOf(r.request.tail).slice(3, 6).map((b) => b.path), ['tools[3]', 'instructions', 'input[0].content[0]']);
  });

  it('a `role: "system"` message inside Anthropic `messages` stays in the messages tier', async () => {
    const withSystem = (text: string) => (b: any) => b.messages.splice(2, 0, { role: 'system', content: text });
    const r = await second([
      ['006-anthropic-messages', withSystem('Gateway note: request 1')],
      ['007-anthropic-messages', withSystem('Gateway note: request 2')],
    ]);
    assert.deepEqual([r.verdict, r.break!.segment, r.break!.blockIndex, r.break!.path], ['break', 'messages', 2, 'messages[2].content']);
    assert.deepEqual(r.causes.map((c) => `${c.kind}: ${c.detail}`), ['history-rewritten: edit at message 2', 'volatile-value: counter in the changed bytes']);
    // The system segment is still the one `system` block.
    assert.deepEqual(blocksOf(r.request.tail).filter((b) => b.segment === 'system').map((b) => b.path), ['system[0]']);
  });

  it('a system message later in a Chat Completions list is rendered where it stands: messages tier', async () => {
    const late = (b: any) => b.messages.splice(3, 0, { role: 'system', content: 'Reminder: be brief.' });
    const r = await second([['004-openai-completions', late], ['004-openai-completions', (b) => (late(b), (b.messages[3].content = 'Reminder: be short.'))]]);
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.path], ['messages', 2, 'messages[3].content']);
    // Only the leading system message is the system prompt.
    assert.deepEqual(blocksOf(r.request.tail).filter((b) => b.segment === 'system').map((b) => b.path), ['messages[0]']);
  });

  it('render order comes from the rules: DeepSeek renders the tools after the system prompt, so a tool change keeps the system cached', async () => {
    const deepseek = (b: any) => (b.model = 'deepseek-chat');
    const r = await second([
      ['004-openai-completions', deepseek],
      ['004-openai-completions', (b) => (deepseek(b), (b.tools[3].function.description += ' Keep it short.'))],
    ]);
    const order = blocksOf(r.request.tail).map((b) => b.segment);
    assert.deepEqual(order.slice(0, 5), ['system', 'tools', 'tools', 'tools', 'tools']);
    assert.deepEqual([r.verdict, r.break!.segment, r.break!.blockIndex, r.break!.path], ['break', 'tools', 3, 'tools[3].function.description']);
    assert.equal(r.family, 'deepseek');
    // The system prompt and three tools precede the change: DeepSeek's 64-token steps of that prefix.
    assert.ok(r.expectedRead! > 1024, String(r.expectedRead));
    assert.equal(r.expectedRead! % 64, 0);
  });
});
