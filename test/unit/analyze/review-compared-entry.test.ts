/**
 * Which entry a request is compared with: live entries first, lineages by what the provider keys
 * on, and parallel requests that cannot read each other's entry (recorded Pi bodies, times, kinds
 * and usage edited the way fan-out, compaction and idle sessions produce them).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (ms: number, extra: Record<string, unknown> = {}) => (m: any) => Object.assign(m, { receivedAt: new Date(T0 + ms).toISOString() }, extra);
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const MIN = 60_000;

describe('review: the entry a request is compared with', () => {
  it('a live entry with a real break wins over a longer-matching expired one (was: ttl-expired against #1)', async () => {
    const tool = (b: any) => (b.tools[3].function.description += ' Prefer edit for small changes.');
    const date = (b: any) => (b.messages[0].content = b.messages[0].content.replace(/Current date: \d{4}-\d{2}-\d{2}/, 'Current date: 2020-01-02'));
    const dir = captureDir(PI_MAIN, [
      ['004-openai-completions', undefined, at(0)],
      ['004-openai-completions', tool, at(9 * MIN)],
      // #1's tools again (the description edit reverted) and a new date; #1 idled 12 min (> ~10).
      ['004-openai-completions', date, at(12 * MIN)],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[2];
    assert.deepEqual([r.verdict, r.matched, r.break!.segment, r.break!.blockIndex], ['break', 2, 'tools', 3]);
    assert.deepEqual(r.causes.map((c) => c.kind), ['tools-changed']);
  });

  it('the prefix unchanged against an entry that expired is ttl-expired, also when a live entry breaks', async () => {
    const tool = (b: any) => (b.tools[3].function.description += ' Prefer edit for small changes.');
    const dir = captureDir(PI_MAIN, [
      ['004-openai-completions', undefined, at(0)],
      ['004-openai-completions', tool, at(9 * MIN)],
      ['004-openai-completions', undefined, at(12 * MIN)],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[2];
    assert.deepEqual([r.verdict, r.matched, r.break], ['ttl-expired', 1, null]);
  });

  it('a summary request that resends the agent prefix under the same key reads the agent entry: hit (was: cold)', async () => {
    // Claude Code style compaction: the whole conversation plus a summary instruction.
    const summarize = (b: any) => b.messages.push({ role: 'user', content: [{ type: 'text', text: 'Summarize the conversation so far.' }] });
    const dir = captureDir(PI_MAIN, [
      ['007-anthropic-messages'],
      ['007-anthropic-messages', summarize, (m) => ((m.kind = 'summary'), (m.usage = { input_tokens: 0, cache_creation_input_tokens: 12, cache_read_input_tokens: 2622, output_tokens: 40 }))],
    ]);
    const a = analyzeSession(await readCaptureSession(dir));
    const r = a.requests[1];
    assert.equal(r.request.kind, 'summary');
    assert.equal(r.lineage, a.requests[0].lineage);
    assert.deepEqual([r.verdict, r.matched, r.expectedRead], ['hit', 1, 2622]);
  });

  it('a summary request with its own system prompt and no tools shares nothing and is too short to cache: below-minimum, not a break', async () => {
    const a = analyzeSession(await readCaptureSession('test/fixtures/pi/main/requests'));
    // #9 (compaction summary) follows #8 on the same model and key.
    assert.equal(a.requests[8].lineage, a.requests[7].lineage);
    assert.deepEqual([a.requests[8].verdict, a.requests[8].matched], ['below-minimum', null]);
  });

  it("parallel requests cannot read each other's entry until a response started: cold with the cause, not a break", async () => {
    // Two sub-agent requests with the same tools, system and history, sent 0.5 s apart; the first
    // one's response starts after 3 s.
    const task = (b: any) => (b.messages[12].content[0].text = 'Please read hello.txt now.');
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', undefined, at(0, { responseStartedAt: iso(3000) })],
      ['006-anthropic-messages', task, at(500, { usage: { input_tokens: 0, cache_creation_input_tokens: 2450, cache_read_input_tokens: 0, output_tokens: 9 } })],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.matched, r.break], ['cold', null, null]);
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty]), [['parallel-request', 'certain']]);
    assert.match(r.causes[0].detail, /^sent while #1 was waiting for its response/);
    // What the two share (tools, system, messages 0-11) was written twice.
    assert.ok(r.lostTokens > 2000 && r.lostTokens <= 2450, String(r.lostTokens));
  });

  it('with only the end of the first response known (Pi, OpenCode record it), the same fan-out is a likely parallel request', async () => {
    const task = (b: any) => (b.messages[12].content[0].text = 'Please read hello.txt now.');
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', undefined, at(0, { responseEndedAt: iso(4000) })],
      ['006-anthropic-messages', task, at(500, { usage: { input_tokens: 0, cache_creation_input_tokens: 2450, cache_read_input_tokens: 0, output_tokens: 9 } })],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.causes.map((c) => [c.kind, c.certainty])], ['cold', [['parallel-request', 'likely']]]);
    assert.match(r.causes[0].detail, /^sent while #1 was in flight/);
  });

  it('sent after the first response started, the same request reads it: a break at the changed message', async () => {
    const task = (b: any) => (b.messages[12].content[0].text = 'Please read hello.txt now.');
    const dir = captureDir(PI_MAIN, [
      ['006-anthropic-messages', undefined, at(0, { responseStartedAt: iso(300) })],
      ['006-anthropic-messages', task, at(500)],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.verdict, r.matched, r.break!.blockIndex], ['break', 1, 12]);
    assert.ok(r.causes.every((c) => c.kind !== 'parallel-request'));
  });
});
