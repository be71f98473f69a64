/**
 * Claude Code's own cache verdict (`message.diagnostics.cache_miss_reason`) beside ours: shown
 * per request and counted per session where they disagree. On the recordings (the scripted
 * provider sends the API's diagnostics, which Claude Code stores as it receives them), and on
 * requests built from the documented shape for the types the recordings do not hold
 * (tools_changed, messages_changed, unavailable).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { hostAgreement } from '../../../src/core/hostmiss.js';
import { sessionReport, type RequestReport } from '../../../src/report/json.js';
import { renderSession } from '../../../src/cli/text.js';
import { mainTranscript } from './helpers.js';

const mk = (verdict: string, segment: string | null, causes: string[] = [], error: string | null = null) =>
  ({ verdict, error, causes: causes.map((kind) => ({ kind, detail: '', certainty: 'certain' })), break: segment ? { segment } : null }) as unknown as RequestReport;

describe("Claude Code's cache diagnostics beside our verdict", () => {
  it('on the main recording: 11 of 12 requests carry it and all 11 agree (#8, a string/block encoding change the provider read past, is a hit)', async () => {
    const [main, agent] = (await readClaudeSession(mainTranscript('test/fixtures/claude-code'))).map((s) => sessionReport(analyzeSession(s)));
    assert.deepEqual(main.requests.map((r) => (r.hostMiss ? `${r.hostMiss.type ?? 'none'}:${r.hostMiss.agrees}` : '-')), [
      'previous_message_not_found:true',
      'none:true',
      'none:true',
      'none:true',
      'none:true',
      'none:true',
      '-', // the HTTP 500: no response, no diagnostics
      'none:true',
      'system_changed:true',
      'model_changed:true',
      'none:true',
      'none:true',
    ]);
    assert.deepEqual(main.hostMiss, { host: 'Claude Code', requests: 11, agree: 11, disagree: 0, notCompared: 0, disagreeing: [] });
    assert.equal(main.requests[7].verdict, 'hit');
    assert.deepEqual(main.requests[8].hostMiss, { host: 'Claude Code', type: 'system_changed', missedTokens: 22504, agrees: true });
    assert.deepEqual(agent.hostMiss, { host: 'Claude Code', requests: 1, agree: 1, disagree: 0, notCompared: 0, disagreeing: [] });
    // The CLI text: the host's verdict below the row, and the session's count.
    const text: string[] = [];
    renderSession(main, (l) => text.push(l));
    assert.ok(text.includes('              Claude Code says: system_changed (22504 tokens missed); agrees'));
    assert.ok(text.includes('  Claude Code cache diagnostics: 11 requests; 11 agree with our verdict, 0 disagree'), text.join('\n'));
    // A hit the host also calls a hit adds no line.
    assert.equal(text.filter((l) => l.includes('Claude Code says')).length, 3);
  });

  it('compares every documented type with our verdict and break segment', () => {
    const cases: Array<[string | null, RequestReport, boolean | null]> = [
      [null, mk('hit', null), true],
      [null, mk('cold', null), true],
      [null, mk('break', 'messages', ['history-rewritten']), false],
      [null, mk('ttl-expired', null), false],
      ['previous_message_not_found', mk('cold', null), true],
      ['previous_message_not_found', mk('ttl-expired', null), true],
      ['previous_message_not_found', mk('hit', null), false],
      ['model_changed', mk('model-switch', null, ['model-switch']), true],
      ['model_changed', mk('break', 'system', ['system-changed']), false],
      ['system_changed', mk('break', 'system', ['system-changed']), true],
      ['system_changed', mk('break', 'head', ['system-changed']), true],
      ['system_changed', mk('break', 'messages', ['history-rewritten']), false],
      ['system_changed', mk('hit', null), false],
      ['tools_changed', mk('break', 'tools', ['tools-changed']), true],
      ['tools_changed', mk('break', 'head', ['system-changed']), true],
      ['tools_changed', mk('break', 'system', ['system-changed']), false],
      ['messages_changed', mk('break', 'messages', ['history-rewritten']), true],
      ['messages_changed', mk('break', 'messages', ['representation-only']), true],
      ['messages_changed', mk('break', 'tools', ['tools-changed']), false],
      ['messages_changed', mk('hit', null), false],
      ['unavailable', mk('hit', null), null],
      ['some_future_reason', mk('break', 'messages'), null],
      ['system_changed', mk('unknown', null, [], 'HTTP 500'), null],
    ];
    for (const [type, r, want] of cases) assert.equal(hostAgreement({ host: 'Claude Code', type }, r), want, `${type} vs ${r.verdict} ${r.break?.segment ?? ''}`);
  });
});
