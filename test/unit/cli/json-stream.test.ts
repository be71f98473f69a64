import assert from 'node:assert/strict';
import { JsonReportWriter, sessionReports } from '../../../src/cli/pipeline.js';
import type { Report, SessionReport } from '../../../src/report/json.js';

async function streamed(sessions: SessionReport[]): Promise<string> {
  const lines: string[] = [];
  const w = new JsonReportWriter((l) => {
    lines.push(l);
  });
  for (const s of sessions) await w.session(s);
  await w.end();
  return lines.join('\n');
}

describe('--json streaming', () => {
  let all: SessionReport[];
  before(async () => {
    all = [];
    const errors: string[] = [];
    for await (const s of sessionReports([{ path: 'test/fixtures' }, { path: 'test/fixtures/pi/main' }], { env: {}, onError: (e) => errors.push(e) })) all.push(s);
    assert.deepEqual(errors, []);
  });

  it('analyzes every session below the inputs once (the second input names one already seen)', () => {
    assert.deepEqual(all.map((s) => [s.host, s.requests.length]), [
      ['botharness', 2], ['botharness', 1], ['claude-code', 12], ['claude-code', 1], ['claude-code', 4], ['codex', 9], ['codex', 4], ['codex', 1], ['codex', 2],
      ['opencode', 6], ['opencode', 5], ['opencode', 1], ['opencode', 9], ['opencode', 8], ['opencode', 5],
      ['opencode', 6], ['opencode', 5], ['opencode', 1], ['opencode', 9], ['opencode', 8], ['opencode', 5], // test/fixtures/opencode-capture (its captures are not joined: env {} names no capture folder with them)
      ['pi', 8], ['pi', 13],
      ['pi', 8], ['pi', 13], // test/fixtures/pi-capture
      ['pi-desktop', 10], ['pi-desktop', 1], ['pi-desktop', 3], ['pi-desktop', 1], ['pi-desktop', 3], ['pi-desktop', 1],
    ]);
  });

  it('writes exactly the bytes of JSON.stringify(report, null, 2), one session at a time', async () => {
    for (const n of [0, 1, 2, all.length]) {
      const report: Report = { version: 1, sessions: all.slice(0, n) };
      assert.equal(await streamed(report.sessions), JSON.stringify(report, null, 2), `${n} sessions`);
    }
    // A session without requests (nothing readable) and one with a single request.
    const edge: Report = { version: 1, sessions: [{ ...all[0], requests: [] }, { ...all[0], requests: all[0].requests.slice(0, 1) }] };
    assert.equal(await streamed(edge.sessions), JSON.stringify(edge, null, 2));
  });
});
