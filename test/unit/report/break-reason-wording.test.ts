/**
 * A break's reason says what its numbers say. It said "everything after it is not read" beside a
 * read of 1,531 tokens (~1,525 expected) and nothing re-billed; now a break that re-billed nothing
 * says what was read and that nothing the cache held was billed again, and one that re-billed says
 * the cache can be read only up to the change, with the tokens and dollars. The terminal's cost
 * column writes zero as `$0` beside `$0.00558` (it wrote `0`), as the timeline does.
 */
import assert from 'node:assert/strict';
import { runCli } from '../../runCli.js';
import type { Report } from '../../../src/report/json.js';

const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

async function reasons(args: string[]): Promise<Array<[number, string]>> {
  const r = await runCli(['analyze', '--json', '--no-cache', ...args]);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as Report).sessions.flatMap((s) => s.requests.filter((q) => q.verdict === 'break').map((q): [number, string] => [q.index, q.reason]));
}

describe('the wording of a break', () => {
  it('pi/main (wire): the compaction #11 and the branches #13, #16 re-billed nothing, and say so with their reads', async () => {
    assert.deepEqual(await reasons([PI_MAIN, '--requests', 'test/fixtures/pi/main/requests']), [
      [11, "The prefix differs from request #8's at message 0 (history-rewritten: compaction: history replaced by a summary at message 0): the cache can be read up to the change (1,531 tokens read, ~1,525 expected) and nothing the cache held was billed again."],
      [13, "The prefix differs from request #8's at message 2 (history-rewritten: branch: the conversation moved to another branch at message 2): the cache can be read up to the change (1,531 tokens read, ~1,525 expected) and nothing the cache held was billed again."],
      [16, "The prefix differs from request #4's at message 2 (history-rewritten: branch: the conversation moved to another branch at message 2): the cache can be read up to the change (1,536 tokens read, ~1,536 expected) and nothing the cache held was billed again."],
    ]);
  });

  it('pi/long #4: the head changed and ~1,616 tokens were billed again (+$0.00558)', async () => {
    assert.deepEqual(await reasons([PI_LONG]), [
      [4, "The prefix differs from request #3's at the head (system prompt and tools) (system-changed: the head (system prompt and tools) changed; the transcript does not record it): the cache can be read only up to the change, so ~1,616 tokens were billed again (+$0.00558)."],
    ]);
  });

  it('the cost column: $0 for nothing extra, $0.00558 for the break, - for no prices; the legend says $0', async () => {
    const r = await runCli(['analyze', '--no-cache', PI_LONG]);
    assert.equal(r.code, 0, r.err);
    // The cost column is right-aligned under its header, 9 wide.
    const end = r.outLines.find((l) => l.startsWith('   # time '))!.indexOf(' cost ') + 5;
    const cost = r.outLines.filter((l) => /^ {3}\d /.test(l)).map((l) => [Number(l.slice(0, 4)), l.slice(end - 9, end).trim()]);
    assert.deepEqual(cost, [[1, '$0'], [2, '$0'], [3, '$0'], [4, '$0.00558'], [5, '$0'], [6, '$0'], [7, '$0'], [8, '$0']]);
    assert.ok(r.outLines.includes('cost: extra USD the break caused; $0 = nothing extra; - = prices unknown. cause? = likely, not certain.'), r.out);
  });

  it('claude-code #9: $0.06628 in the cost column and the totals, five places below $0.1 as in the timeline (it was $0.07)', async () => {
    const r = await runCli(['analyze', '--no-cache', 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.outLines.find((l) => l.startsWith('   9 '))!, / break +system 0 @47322 +\$0\.06628 history-rewritten: /);
    assert.ok(r.outLines.includes('  totals: read 179286, write 68506, uncached 0, output 191 tokens; hit rate 72.4%; 1 break; re-billed ~19213 tokens ($0.06628)'), r.out);
  });
});
