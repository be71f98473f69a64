/**
 * The verdict of a request with nothing earlier to compare with (the first of its lineage): a
 * prompt known to be below the model's minimum cacheable length is below-minimum, not cold (the
 * provider writes no entry for it), unless its usage shows the provider read or wrote one; a first
 * request that read from the cache says where that read can have come from.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { hostAgreement } from '../../../src/core/hostmiss.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { main } from '../../../src/cli/main.js';
import type { Report } from '../../../src/report/json.js';
import { captureDir, PI_LONG, PI_MAIN } from './review-helpers.js';

const haiku = (b: any) => (b.model = 'claude-3-5-haiku-20241022');
const usage = (u: { input: number; write: number; read: number }) => (m: any) => {
  m.model = 'claude-3-5-haiku-20241022';
  m.usage = { input_tokens: u.input, cache_creation_input_tokens: u.write, cache_read_input_tokens: u.read, output_tokens: 9 };
};

async function report(path: string, requests: string): Promise<Report> {
  const out: string[] = [];
  assert.equal(await main(['analyze', path, '--requests', requests, '--json', '--no-cache'], (s) => out.push(s), () => {}, process.cwd()), 0);
  return JSON.parse(out.join('\n')) as Report;
}

describe('first request of a lineage', () => {
  it('below the minimum (1,581 < 2,048 tokens on claude-3-5-haiku) and nothing cached: below-minimum', async () => {
    const a = analyzeSession(await readCaptureSession(captureDir(PI_LONG, [['002-anthropic-messages', haiku, usage({ input: 1581, write: 0, read: 0 })]])));
    assert.deepEqual(a.requests.map((r) => [r.verdict, r.matched, r.promptTokens, r.lostTokens]), [['below-minimum', null, 1581, 0]]);
  });

  it('below our minimum but the usage shows a cache write: cold (the provider cached it)', async () => {
    const a = analyzeSession(await readCaptureSession(captureDir(PI_LONG, [['002-anthropic-messages', haiku, usage({ input: 0, write: 1581, read: 0 })]])));
    assert.deepEqual(a.requests.map((r) => [r.verdict, r.promptTokens]), [['cold', 1581]]);
  });

  it("a side request after side requests only (Pi main's compaction summaries #8.1, #8.2, 351 and 425 tokens) is below-minimum, cold when its usage shows a cache write", async () => {
    const summaries = async (write: number) =>
      analyzeSession(
        await readCaptureSession(
          captureDir(PI_MAIN, [
            ['009-anthropic-messages'],
            ['010-anthropic-messages', undefined, (m: any) => write && (m.usage = { ...m.usage, input_tokens: 0, cache_creation_input_tokens: write })],
          ]),
        ),
      );
    assert.deepEqual((await summaries(0)).requests.map((r) => [r.request.kind, r.verdict, r.promptTokens]), [['summary', 'below-minimum', 351], ['summary', 'below-minimum', 425]]);
    assert.deepEqual((await summaries(425)).requests.map((r) => [r.request.kind, r.verdict, r.promptTokens]), [['summary', 'below-minimum', 351], ['summary', 'cold', 425]]);
  });

  it('the recorded OpenCode title requests (589–936 tokens on gpt-5-mini, minimum 1,024) are below-minimum; the agent requests after them that read an entry from an earlier session say so', async () => {
    const r = await report('test/fixtures/opencode', 'test/fixtures/opencode/requests');
    const firsts = r.sessions.map((s) => s.requests.slice(0, 2).map((q) => `${q.number} ${q.kind} ${q.verdict} ${q.promptTokens} ${q.observedRead}`).join(' | '));
    assert.deepEqual(firsts, [
      '0.1 title below-minimum 591 0 | 1 agent cold 7490 0',
      '0.1 title below-minimum 589 0 | 1 agent cold 7605 0',
      '1 agent cold 5974 0', // the @general sub-agent: one request
      '0.1 title below-minimum 592 0 | 1 agent cold 7491 7424',
      '0.1 title below-minimum 936 0 | 1 agent cold 7841 7168',
      '0.1 title below-minimum 931 0 | 1 agent cold 7836 7168',
    ]);
    const crossed = r.sessions[3].requests[1];
    assert.equal(
      crossed.reason,
      'First request of its lineage (fake/gpt-5-mini) in this session, yet it read 7,424 of 7,491 prompt tokens from the cache: an entry written outside this session (an earlier session or a request not in the transcript, with the same prefix).',
    );
    assert.equal(r.sessions[0].requests[1].reason, 'First request of its lineage (fake/gpt-5-mini) in this session: there is no earlier entry here to read, so the prompt is written to the cache.');
  });

  it("agrees with the host's cache verdict: no miss or previous_message_not_found for a below-minimum request", () => {
    const r = { verdict: 'below-minimum', break: null, causes: [], error: null };
    assert.equal(hostAgreement({ type: null } as any, r), true);
    assert.equal(hostAgreement({ type: 'previous_message_not_found' } as any, r), true);
    assert.equal(hostAgreement({ type: 'system_changed' } as any, r), false);
  });
});
