/**
 * Request numbers are the same in every evidence mode (core/numbering.ts): the transcript's agent
 * requests are 1, 2, 3… with or without the bodies the host sent, and a request only the wire
 * shows (a summary or title request, a failed attempt the transcript does not record) is `N.k`
 * after agent request N. Checked on every recording with such requests, through `analyze --json`
 * (`number`, `matchedNumber`, the reason's "request #N") and the text report.
 */
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.js';
import { parseRequestNumber, RequestNumbering } from '../../../src/core/numbering.js';
import type { Report, SessionReport } from '../../../src/report/json.js';

const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';
const CODEX = 'test/fixtures/codex/codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl';
const CLAUDE = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';
const OPENCODE = 'test/fixtures/opencode/opencode.db';
const OPENCODE_COMPACTION = 'ses_dcf12063affe59b8qPYo2NJTOV';

async function run(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await main(args, (s) => out.push(s), () => {}, process.cwd());
  return { code, out: out.join('\n') };
}

async function report(path: string, requests?: string): Promise<Report> {
  const r = await run(['analyze', path, '--json', '--no-cache', ...(requests ? ['--requests', requests] : [])]);
  assert.equal(r.code, 0);
  return JSON.parse(r.out) as Report;
}

const numbers = (s: SessionReport) => s.requests.map((r) => r.number);
const breaks = (s: SessionReport) => s.requests.filter((r) => r.verdict === 'break').map((r) => [r.number, r.matchedNumber]);

describe('request numbers across evidence modes', () => {
  it('Pi main: breaks #9, #10, #13 (vs #8, #8, #4) in both modes; the wire adds the summary requests #8.1, #8.2 (compaction) and #9.1 (branch)', async () => {
    const [recon] = (await report(PI_MAIN)).sessions;
    const [wire] = (await report(PI_MAIN, 'test/fixtures/pi/main/requests')).sessions;
    assert.deepEqual(numbers(recon), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13']);
    assert.deepEqual(numbers(wire), ['1', '2', '3', '4', '5', '6', '7', '8', '8.1', '8.2', '9', '9.1', '10', '11', '12', '13']);
    assert.deepEqual(breaks(recon), [['9', '8'], ['10', '8'], ['13', '4']]);
    assert.deepEqual(breaks(wire), [['9', '8'], ['10', '8'], ['13', '4']]);
    // `index` keeps its meaning (send order in this report): the compaction request is the 11th sent.
    assert.deepEqual(wire.requests.filter((r) => r.verdict === 'break').map((r) => [r.index, r.matched, r.line]), [[11, 8, 33], [13, 8, 38], [16, 4, 45]]);
    assert.deepEqual(recon.requests.filter((r) => r.verdict === 'break').map((r) => r.line), [33, 38, 45]);
    assert.deepEqual(wire.requests.filter((r) => r.kind !== 'agent').map((r) => [r.number, r.index, r.file.replace(/^.*\//, '')]), [
      ['8.1', 9, '009-anthropic-messages.body.json'],
      ['8.2', 10, '010-anthropic-messages.body.json'],
      ['9.1', 12, '012-anthropic-messages.body.json'],
    ]);
    assert.match(wire.requests[10].reason, /^The prefix differs from request #8's at message 0/);
  });

  it('Pi main: the turn-prefix summary #8.2 is too short to cache and is not judged against the history summary #8.1 (a prompt of its own, no history-rewritten)', async () => {
    const [wire] = (await report(PI_MAIN, 'test/fixtures/pi/main/requests')).sessions;
    const [history, turn, branch] = wire.requests.filter((r) => r.kind === 'summary');
    assert.deepEqual([history.verdict, history.matchedNumber], ['below-minimum', null]);
    assert.deepEqual([turn.verdict, turn.matched, turn.matchedNumber, turn.causes, turn.break, turn.promptTokens], ['below-minimum', null, null, [], null, 425]);
    assert.equal(turn.reason, 'The prompt (425 tokens) is shorter than the minimum cacheable length of claude-sonnet-4-5, so the provider neither reads nor writes a cache entry for it.');
    assert.deepEqual([branch.verdict, branch.matchedNumber, branch.usage?.cacheWrite], ['cold', null, 1771]);
  });

  it('Pi main text report: the # column shows the numbers, the break lines "vs #8", the legend explains N.k', async () => {
    const { out } = await run(['analyze', PI_MAIN, '--no-cache', '--requests', 'test/fixtures/pi/main/requests']);
    const rows = out.split('\n').filter((l) => /^ {0,3}\d+(\.\d+)? \d\d:\d\d:\d\d /.test(l));
    assert.deepEqual(rows.map((l) => l.slice(0, 4)), ['   1', '   2', '   3', '   4', '   5', '   6', '   7', '   8', ' 8.1', ' 8.2', '   9', ' 9.1', '  10', '  11', '  12', '  13']);
    assert.match(rows[10], /^ {3}9 09:26:10 claude-sonnet-4-5 +1531 +1658 +0 fb7f2238d3b2 break +message 0 @90 /);
    assert.ok(out.includes('              at messages[0].content[0].text (vs #8); read 1531, ~1525 expected up to the change'));
    assert.ok(out.includes("#: agent requests 1, 2, 3… in send order; 8.1, 8.2… = the other requests sent after #8: the host's side requests"));
  });

  it('check names the same requests in both modes (Pi main #9, #10, #13 on lines 33, 38, 45)', async () => {
    for (const extra of [[], ['--requests', 'test/fixtures/pi/main/requests']]) {
      // --min-tokens 0: every break fails the gate (these re-billed nothing).
      const r = await run(['check', PI_MAIN, '--no-cache', '--min-tokens', '0', ...extra]);
      assert.equal(r.code, 1);
      assert.deepEqual(
        [...r.out.matchAll(/\.jsonl:(\d+): pi session \S+ request #(\S+) breaks the cache/g)].map((m) => `${m[1]} #${m[2]}`),
        ['33 #9', '38 #10', '45 #13'],
        extra.join(' '),
      );
    }
  });

  it('Codex: the failed attempt the rollout does not record is #3.1 on the wire, so the compaction request stays #7 (vs #6) and its summary #6.1 in both modes', async () => {
    const [recon] = (await report(CODEX)).sessions;
    const [wire] = (await report(CODEX, 'test/fixtures/codex/requests')).sessions;
    assert.deepEqual(numbers(recon), ['1', '2', '3', '4', '5', '6', '6.1', '7', '8']);
    assert.deepEqual(numbers(wire), ['1', '2', '3', '3.1', '4', '5', '6', '6.1', '7', '8']);
    assert.deepEqual([wire.requests[3].kind, wire.requests[3].error, wire.requests[3].verdict], ['agent', 'HTTP 500', 'unknown']);
    assert.deepEqual(breaks(recon), [['7', '6']]);
    assert.deepEqual(breaks(wire), [['7', '6']]);
  });

  it('Claude Code: the compaction call only the wire shows is #8.1; the request after it is #9 in both modes (vs #8 reconstructed, vs the summary #8.1 on the wire)', async () => {
    const recon = (await report(CLAUDE)).sessions.find((s) => s.host === 'claude-code' && !s.parentId)!;
    const wire = (await report(CLAUDE, 'test/fixtures/claude-code/requests')).sessions.find((s) => s.host === 'claude-code' && !s.parentId)!;
    assert.equal(recon.requests.length, 12);
    assert.deepEqual(numbers(wire), ['1', '2', '3', '4', '5', '6', '7', '8', '8.1', '9', '10', '11', '12']);
    assert.deepEqual(breaks(recon), [['9', '8']]);
    assert.deepEqual(breaks(wire), [['9', '8.1']]);
    assert.deepEqual([wire.requests[8].kind, wire.requests[8].verdict, wire.requests[8].matchedNumber], ['summary', 'hit', '8']);
  });

  it('OpenCode compaction session: title #0.1 on the wire only, summaries #4.1 and #6.1 and breaks #5, #7 in both modes; the manual compaction\'s summary is not judged against the auto one\'s', async () => {
    const recon = (await report(OPENCODE)).sessions.find((s) => s.id === OPENCODE_COMPACTION)!;
    const wire = (await report(OPENCODE, 'test/fixtures/opencode/requests')).sessions.find((s) => s.id === OPENCODE_COMPACTION)!;
    assert.deepEqual(numbers(recon), ['1', '2', '3', '4', '4.1', '5', '6', '6.1', '7']);
    assert.deepEqual(numbers(wire), ['0.1', '1', '2', '3', '4', '4.1', '5', '6', '6.1', '7']);
    assert.equal(wire.requests[0].kind, 'title');
    for (const s of [recon, wire]) {
      assert.deepEqual(breaks(s), [['5', '4'], ['7', '6']]);
      const manual = s.requests.find((r) => r.number === '6.1')!;
      assert.deepEqual([manual.kind, manual.verdict, manual.matchedNumber, manual.causes.length], ['summary', 'below-minimum', null, 0]);
    }
  });

  it('every OpenCode session: the numbers the database gives its messages are those on the wire', async () => {
    const recon = (await report(OPENCODE)).sessions;
    const wire = (await report(OPENCODE, 'test/fixtures/opencode/requests')).sessions;
    for (const s of wire) {
      const r = recon.find((x) => x.id === s.id)!;
      const byRow = new Map(r.requests.map((q) => [q.row, q.number]));
      for (const q of s.requests) if (q.row) assert.equal(q.number, byRow.get(q.row), `${s.id} ${q.row}`);
    }
  });
});

describe('request numbers (core/numbering.ts)', () => {
  it('agent requests count 1, 2, …; the others N.k after agent request N (0.k before the first)', () => {
    const a = { kind: 'agent' as const };
    const numbering = new RequestNumbering();
    assert.deepEqual(([{ kind: 'title' }, a, a, { kind: 'summary' }, { kind: 'agent', wireOnly: true }, a, { kind: 'summary' }] as const).map((r) => numbering.next(r)), ['0.1', '1', '2', '2.1', '2.2', '3', '3.1']);
  });

  it('parses what a user types: 9, 8.1, #8.1, leading zeros; not 0, 8.0, signs, spaces, exponents or numbers past 2^53', () => {
    assert.deepEqual(['9', '8.1', '#8.1', '08.01', '0.1'].map(parseRequestNumber), ['9', '8.1', '8.1', '8.1', '0.1']);
    assert.deepEqual(['0', '8.0', '-1', '+1', ' 3', '1e1', '0x3', '8.', '.1', '99999999999999999999', '1.99999999999999999999', ''].map(parseRequestNumber), Array(12).fill(null));
  });
});
