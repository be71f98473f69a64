import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { stepOf } from '../../../src/extension/livePatch.js';
import { applyPatch } from '../../../src/protocol.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { LiveAnalysis } from '../../../src/live/session.js';
import { sessionReport, type SessionReport } from '../../../src/report/json.js';
import { attachPhux } from '../../../src/report/phux.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

describe('live tail patches (worker → Timeline panel)', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-patch-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the panel rebuilt from patches equals a full analysis after every append; appends judged alone send only their entries', async function () {
    this.timeout(120_000);
    const source = join(dir, 'source.jsonl');
    await writeSession(source, { bytes: 400_000, seed: 5, id: '019a0000-0000-7000-8000-0000000fa7c1', cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 4) });
    const text = readFileSync(source, 'utf8');
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
    const file = join(dir, 'grown.jsonl');
    writeFileSync(file, text.slice(0, ends[25]));
    const [ref] = await findSessions(file);
    const opts = { calibrationLimit: 12 };
    const full = async () => {
      const s = await readPiSession(file);
      return JSON.stringify(attachPhux(sessionReport(analyzeSession(s, undefined, opts)), s));
    };
    const live = await LiveAnalysis.open(ref, opts);
    let panel: SessionReport = live.report;
    const counts = { patches: 0, full: 0, none: 0 };
    let at = ends[25];
    for (let i = 26; i < ends.length; i += 1 + (i % 4)) {
      appendFileSync(file, text.slice(at, ends[i]));
      at = ends[i];
      const step = stepOf(await live.update());
      if (step.patch) {
        counts.patches++;
        assert.deepEqual(step.patch.header.requests, [], 'a patch carries no earlier request');
        panel = applyPatch(panel, step.patch);
      } else if (step.full) {
        counts.full++;
        panel = step.full;
      } else counts.none++;
      assert.equal(JSON.stringify(panel), await full(), `after line ${i + 1}`);
    }
    assert.ok(counts.patches > 40, JSON.stringify(counts));
    // An unchanged file is no step at all.
    assert.deepEqual(stepOf(await live.update()), { full: null, patch: null });
    // A line that adds no request (here the session's new name) patches the header alone.
    if (at < text.length) {
      appendFileSync(file, text.slice(at));
      panel = applyPatch(panel, stepOf(await live.update()).patch!);
    }
    const lastId = (JSON.parse(text.slice(ends.at(-2)!, ends.at(-1)! - 1)) as { id: string }).id;
    appendFileSync(file, JSON.stringify({ type: 'session_info', id: 'fa7c1e01', parentId: lastId, timestamp: '2026-11-05T00:00:00.000Z', name: 'Renamed while followed' }) + '\n');
    const renamed = stepOf(await live.update());
    assert.ok(renamed.patch, 'a header-only patch');
    assert.deepEqual([renamed.patch.added, renamed.patch.revised, renamed.patch.header.title], [[], [], 'Renamed while followed']);
    panel = applyPatch(panel, renamed.patch);
    assert.equal(JSON.stringify(panel), await full(), 'after the rename');
  });

  it('a patch that does not follow the report is refused (the panel then asks for the whole report)', () => {
    const req = (index: number) => ({ index }) as SessionReport['requests'][number];
    const report = { requests: [req(1), req(2)] } as SessionReport;
    const header = { requests: [] } as unknown as SessionReport;
    assert.throws(() => applyPatch(report, { header, added: [req(2)], revised: [] }), /request #2 does not follow #2/);
    assert.throws(() => applyPatch(report, { header, added: [], revised: [req(7)] }), /request #7 is not in the report/);
    const next = applyPatch(report, { header, added: [req(3)], revised: [{ ...req(2), verdict: 'hit' } as SessionReport['requests'][number]] });
    assert.deepEqual(next.requests.map((r) => [r.index, r.verdict]), [[1, undefined], [2, 'hit'], [3, undefined]]);
    assert.equal(report.requests.length, 2, 'the previous report is left as it was');
  });
});
