/**
 * `check`'s gate: every break of an agent request is listed with what it re-billed; it fails (exit
 * 1) only when it re-billed at least `--min-tokens` (default 1), cost at least `--min-usd` when
 * given, and has a cause outside `--ignore`. It failed on every break, also on the compactions and
 * branches of the recordings that re-billed nothing ($0). Usage errors exit 2.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { runCli } from '../../runCli.js';
import { CAUSE_KINDS } from '../../../src/core/classify.js';
import { DEFAULT_GATE, gateText, parseGate, passReason, type Gate } from '../../../src/cli/gate.js';

const PI_MAIN = resolve('test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--');
const MAIN_FILE = `${PI_MAIN}/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl`;
const PI_LONG = resolve('test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--');
const LONG_FILE = `${PI_LONG}/2026-12-01T09-25-41-787Z_01a230ec-991a-7497-9a50-b9f4f6517541.jsonl`;
const OC = resolve('test/fixtures/opencode');

const main = (n: number, line: number, tail: string) =>
  `${MAIN_FILE}:${line}: pi session 01a230ec-9a4e-7417-8af1-68d34234bdc8 request #${n} breaks the cache (history-rewritten): ~0 tokens re-billed, $0${tail}`;
const LONG_4 = `${LONG_FILE}:11: pi session 01a230ec-991a-7497-9a50-b9f4f6517541 request #4 breaks the cache (system-changed): ~1616 tokens re-billed, $0.00558`;

async function check(...args: string[]) {
  const r = await runCli(['check', '--no-cache', ...args]);
  return { code: r.code, out: r.outLines, err: r.err };
}

describe('check: what fails the gate', () => {
  it('pi/main (wire): its compaction and two branches re-billed nothing: listed, they pass by default (exit 0)', async () => {
    assert.deepEqual(await check(PI_MAIN, '--requests', 'test/fixtures/pi/main/requests'), {
      code: 0,
      out: [
        main(9, 33, '; passes: under --min-tokens 1'),
        main(10, 38, '; passes: under --min-tokens 1'),
        main(13, 45, '; passes: under --min-tokens 1'),
        'no cache breaks past the gate (re-billed ≥ 1 token) in 1 session; 3 breaks pass it',
      ],
      err: '',
    });
  });

  it('--min-tokens 0: every break fails, as check did before (exit 1)', async () => {
    assert.deepEqual(await check(PI_MAIN, '--requests', 'test/fixtures/pi/main/requests', '--min-tokens', '0'), {
      code: 1,
      out: [main(9, 33, ''), main(10, 38, ''), main(13, 45, ''), '3 requests break the cache'],
      err: '',
    });
  });

  it('pi/long #4 re-billed ~1616 tokens ($0.00558): fails by default; passes under --min-usd 0.01, --min-tokens 2000 or --ignore system-changed', async () => {
    assert.deepEqual(await check(PI_LONG), { code: 1, out: [LONG_4, '1 request breaks the cache'], err: '' });
    assert.deepEqual(await check(PI_LONG, '--min-usd', '0.01'), {
      code: 0,
      out: [`${LONG_4}; passes: under --min-usd 0.01`, 'no cache breaks past the gate (re-billed ≥ 1 token, cost ≥ $0.01) in 1 session; 1 break passes it'],
      err: '',
    });
    assert.deepEqual((await check(PI_LONG, '--min-usd', '$0.005')).code, 1);
    assert.deepEqual(await check(PI_LONG, '--min-tokens', '2000'), {
      code: 0,
      out: [`${LONG_4}; passes: under --min-tokens 2000`, 'no cache breaks past the gate (re-billed ≥ 2000 tokens) in 1 session; 1 break passes it'],
      err: '',
    });
    assert.deepEqual((await check(PI_LONG, '--ignore', 'system-changed')).out, [`${LONG_4}; passes: system-changed ignored`, 'no cache breaks past the gate (re-billed ≥ 1 token, system-changed ignored) in 1 session; 1 break passes it']);
  });

  it('opencode (wire): a break passes --ignore only when every cause is ignored (#4: system-changed and phux-context-in-head)', async () => {
    const oc4 = `${OC}/opencode.db (message:msg_230eef90d001zfcaGAcuhlO0bR): opencode session ses_dcf113f82ffe0AQvhG5Km2IW6u request #4 breaks the cache (system-changed, phux-context-in-head): ~439 tokens re-billed, $0.00010`;
    const oc7 = `${OC}/opencode.db (message:msg_230ef277f001UmKX4h3S2f9iNf): opencode session ses_dcf12063affe59b8qPYo2NJTOV request #7 breaks the cache (history-rewritten): ~128 tokens re-billed, $0.00003`;
    const one = await check(OC, '--requests', 'test/fixtures/opencode/requests', '--ignore', 'system-changed');
    assert.equal(one.code, 1);
    assert.deepEqual(one.out.filter((l) => !l.includes('~0 tokens')), [oc7, oc4, '2 requests break the cache; 2 more breaks pass the gate (re-billed ≥ 1 token, system-changed ignored)']);
    const both = await check(OC, '--requests', 'test/fixtures/opencode/requests', '--ignore', 'system-changed,phux-context-in-head', '--ignore', 'history-rewritten');
    assert.equal(both.code, 0);
    assert.deepEqual(both.out.filter((l) => !l.includes('~0 tokens')), [
      `${oc7}; passes: history-rewritten ignored`,
      `${oc4}; passes: system-changed, phux-context-in-head ignored`,
      'no cache breaks past the gate (re-billed ≥ 1 token, system-changed, phux-context-in-head, history-rewritten ignored) in 6 sessions; 4 breaks pass it',
    ]);
  });

  it('usage errors exit 2 with one line naming the problem', async () => {
    const cases: Array<[string[], string]> = [
      [['--ignore', 'compaction'], `prefix-lens: --ignore: unknown cause "compaction" (causes: ${CAUSE_KINDS.join(', ')})`],
      [['--min-tokens=-1'], 'prefix-lens: --min-tokens takes a whole number of tokens (0 or more), got "-1"'],
      [['--min-tokens', '1.5'], 'prefix-lens: --min-tokens takes a whole number of tokens (0 or more), got "1.5"'],
      [['--min-tokens', '1e3'], 'prefix-lens: --min-tokens takes a whole number of tokens (0 or more), got "1e3"'],
      [['--min-usd', 'ten'], 'prefix-lens: --min-usd takes an amount of US dollars such as 0.01, got "ten"'],
    ];
    for (const [args, line] of cases) {
      const r = await check(PI_LONG, ...args);
      assert.deepEqual([r.code, r.out, r.err.split('\n')[0]], [2, [], line], args.join(' '));
    }
    const a = await runCli(['analyze', PI_LONG, '--min-usd', '0.01']);
    assert.deepEqual([a.code, a.out, a.err.split('\n')[0]], [2, '', 'prefix-lens: --min-usd is an option of check, not analyze']);
  });

  it('the gate itself: unknown prices do not pass --min-usd; the words of the last line', () => {
    const gate = parseGate({ 'min-usd': '0.01' }) as Gate;
    const brk = { causes: [{ kind: 'system-changed' as const, detail: '', certainty: 'certain' as const }], lostTokens: 5000 };
    assert.equal(passReason({ ...brk, costUSD: null }, gate), null);
    assert.equal(passReason({ ...brk, costUSD: 0.001 }, gate), 'under --min-usd 0.01');
    assert.equal(passReason({ ...brk, costUSD: 0.01 }, gate), null);
    assert.equal(passReason({ causes: [], lostTokens: 5000, costUSD: 1 }, parseGate({ ignore: ['system-changed'] }) as Gate), null, 'a break of no known cause is never ignored');
    assert.equal(gateText(DEFAULT_GATE), 're-billed ≥ 1 token');
    assert.equal(gateText(parseGate({ 'min-tokens': '0' }) as Gate), 'every break');
    assert.equal(gateText(parseGate({ 'min-tokens': '0', ignore: ['model-switch'] }) as Gate), 'model-switch ignored');
  });
});
