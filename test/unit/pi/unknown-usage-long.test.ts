/**
 * The recorded Pi long session (8 requests; #4 breaks in the opaque head after an AGENTS.md edit:
 * read 0 of ~1,616 expected) with a usage field on every assistant line that is not a token count.
 * The field is unknown (a warning per line), so no prompt is known and the token model has
 * nothing to calibrate on; the break must still be found at #4 with the same break point, and
 * `check` must still fail: a prompt of unknown size is never judged below the minimum from a
 * guess (it was: all 8 requests below-minimum, 0 breaks, `check` passed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../hostile/harness.js';

const DIR = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
const FIXTURE = join(DIR, readdirSync(DIR).find((n) => n.endsWith('.jsonl'))!);

/** The fixture with each assistant line's `message.usage` edited by `edit` (as JSON text: keys and order kept). */
function variant(dir: string, name: string, edit: (usage: string) => string): string {
  const text = readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .map((l) => (l.includes('"role":"assistant"') ? l.replace(/"usage":\{"input":-?\d+,"output":\d+,"cacheRead":\d+,"cacheWrite":\d+/, (u) => edit(u)) : l))
    .join('\n');
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, text);
  return file;
}

type Row = [string, string, string | null, string | null, number | null, number | null, number | null, number];

async function rows(file: string): Promise<{ rows: Row[]; totals: Record<string, unknown>; warnings: number }> {
  const r = await runCli(['analyze', '--json', '--no-cache', file]);
  assert.equal(r.code, 0, r.err);
  const s = JSON.parse(r.out).sessions[0];
  return {
    rows: s.requests.map((q: any): Row => [q.number, q.verdict, q.break ? `${q.break.segment} ${q.break.path}` : null, q.matchedNumber, q.promptTokens, q.expectedRead, q.observedRead, q.lostTokens]),
    totals: { breaks: s.totals.breaks, lostTokens: s.totals.lostTokens, hitRate: s.totals.hitRate },
    warnings: s.diagnostics.filter((d: any) => d.message.startsWith('values taken as unknown')).length,
  };
}

describe('Pi long session with a usage field unknown on every request: the break at #4 is still found', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-unknown-usage-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('as recorded: #4 breaks in the head (read 0, ~1,616 expected), check exits 1', async () => {
    const got = await rows(FIXTURE);
    assert.deepEqual(got.rows[3], ['4', 'break', 'head (head)', '3', 1665, 1616, 0, 1616]);
    assert.equal((await runCli(['check', FIXTURE])).code, 1);
  });

  // cacheWrite unknown, cacheRead known: each entry holds at least what its request read.
  const readKnown: Row[] = [
    ['1', 'cold', null, null, 23, 0, 0, 0],
    ['2', 'hit', null, '1', 1547, 23, 1547, 0],
    ['3', 'hit', null, '2', 1581, 1547, 1581, 0],
    ['4', 'break', 'head (head)', '3', 162, 1581, 0, 1581],
    ['5', 'unknown', null, null, 207, 1581, 0, 0],
    ['6', 'hit', null, '4', 1665, 1581, 1665, 0],
    ['7', 'model-switch', null, null, 1786, 0, 0, 0],
    ['8', 'model-switch', null, null, 1978, 0, 0, 0],
  ];
  const cases: Array<[string, (u: string) => string, Row[], number]> = [
    ['cacheWrite null', (u) => u.replace(/"cacheWrite":\d+/, '"cacheWrite":null'), readKnown, 1581],
    ['cacheWrite a string ("1547")', (u) => u.replace(/"cacheWrite":(\d+)/, '"cacheWrite":"$1"'), readKnown, 1581],
    [
      // Only the writes known: #4 wrote 1,665 tokens where its prefix grew ~200 bytes past #3's breakpoint, so it read at most ~76 of #3's entry.
      'cacheRead 9007199254740993 and input -5',
      (u) => u.replace(/"cacheRead":\d+/, '"cacheRead":9007199254740993').replace(/"input":\d+/, '"input":-5'),
      [
        ['1', 'cold', null, null, 1547, 0, null, 0],
        ['2', 'hit', null, '1', 68, 1547, null, 0],
        ['3', 'hit', null, '2', 114, 1547, null, 0],
        ['4', 'break', 'head (head)', '3', 1665, 1547, null, 1471],
        ['5', 'unknown', null, null, 207, 1665, null, 0],
        ['6', 'hit', null, '4', 207, 1665, null, 0],
        ['7', 'model-switch', null, null, 224, 0, null, 0],
        ['8', 'model-switch', null, null, 428, 0, null, 0],
      ],
      1471,
    ],
  ];
  for (const [name, edit, want, lost] of cases) {
    it(`${name}: no request below the minimum, #4 breaks in the head against #3, check exits 1 naming it`, async () => {
      const file = variant(dir, name.replace(/\W+/g, '-'), edit);
      const got = await rows(file);
      assert.deepEqual(got.rows, want);
      assert.deepEqual(got.totals, { breaks: 1, lostTokens: lost, hitRate: null });
      assert.equal(got.warnings, 8);
      const check = await runCli(['check', file]);
      assert.equal(check.code, 1);
      assert.match(check.out, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:11: pi session 01a230ec-991a-7497-9a50-b9f4f6517541 request #4 breaks the cache \\(system-changed\\): ~${lost} tokens re-billed`, 'm'));
      assert.match(check.out, /^1 request breaks the cache$/m);
    });
  }
});
