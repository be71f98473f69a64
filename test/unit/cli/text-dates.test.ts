/**
 * The text report's time column is the UTC time of day: the session's header says which days
 * (` on 2026-12-01 (UTC)`, ` from … to … (UTC)`), and a request sent on another day than the one
 * before it is preceded by its date, so a session that spans days (or years) does not read as one.
 */
import assert from 'node:assert/strict';
import { renderSession } from '../../../src/cli/text.js';
import type { Report } from '../../../src/report/json.js';
import { runCli } from '../../runCli.js';

const PI_LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

describe('text report: the days of a session', () => {
  it('the Pi long recording (one day): "8 requests on 2026-12-01 (UTC)", no date line in the table', async () => {
    const r = await runCli(['analyze', '--no-cache', PI_LONG]);
    assert.equal(r.outLines[2], '  8 requests on 2026-12-01 (UTC), evidence: reconstructed');
    assert.equal(r.outLines.filter((l) => l.startsWith('     ── ')).length, 0);
  });

  it('the same requests moved over three days: the header gives the first and last day, a date line before each new day', async () => {
    const report = JSON.parse((await runCli(['analyze', '--json', '--no-cache', PI_LONG])).out) as Report;
    const s = report.sessions[0];
    // #1–#3 on Dec 1, #4–#6 on Dec 2 (#5 has no time: no line of its own), #7–#8 a year later.
    const days = ['2026-12-01', '2026-12-01', '2026-12-01', '2026-12-02', null, '2026-12-02', '2027-12-03', '2027-12-03'];
    s.requests.forEach((r, i) => (r.time = days[i] === null ? null : `${days[i]}${r.time!.slice(10)}`));
    const lines: string[] = [];
    renderSession(s, (l) => lines.push(l));
    assert.equal(lines[2], '  8 requests from 2026-12-01 to 2027-12-03 (UTC), evidence: reconstructed');
    const rows = lines.filter((l) => /^ {3}\d /.test(l) || l.startsWith('     ── ')).map((l) => (l.startsWith('     ── ') ? l : l.slice(0, 13)));
    assert.deepEqual(rows, ['   1 09:25:42', '   2 09:25:47', '   3 09:25:47', '     ── 2026-12-02 ──', '   4 09:25:53', '   5 --:--:--', '   6 09:25:57', '     ── 2027-12-03 ──', '   7 09:26:01', '   8 09:26:05']);
  });
});
