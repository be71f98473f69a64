import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { LiveAnalysis } from '../../../src/live/session.js';
import { sessionReport } from '../../../src/report/json.js';
import { attachPhux } from '../../../src/report/phux.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

const FIXTURES = ['test/fixtures/pi/main/agent/sessions', 'test/fixtures/pi/long/agent/sessions'].map((d) => {
  const sub = join(d, readdirSync(d)[0]);
  return join(sub, readdirSync(sub)[0]);
});
const report = (s: Session) => JSON.stringify(sessionReport(analyzeSession(s)));

describe('live tail (Pi): continuing from the last complete line', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-live-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `text` in pieces (whole lines, and lines split in the middle), checking after each one. */
  async function grow(name: string, text: string, cuts: number[]): Promise<number> {
    const file = join(dir, name);
    writeFileSync(file, text.slice(0, cuts[0]));
    const live = await PiLiveSession.open(file);
    let checks = 0;
    assert.equal(report(live.session()), report(await readPiSession(file)), `${name} at ${cuts[0]}`);
    for (let i = 1; i < cuts.length; i++) {
      appendFileSync(file, text.slice(cuts[i - 1], cuts[i]));
      const change = await live.update();
      assert.notEqual(change, 'reset', `${name}: appending must not read again (${cuts[i]})`);
      assert.equal(report(live.session()), report(await readPiSession(file)), `${name} at byte ${cuts[i]}`);
      checks++;
    }
    return checks;
  }

  it('every recorded session, grown line by line and mid-line, gives the full read at every step', async () => {
    for (const f of FIXTURES) {
      const text = readFileSync(f, 'utf8');
      const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
      // After the header and first entries; then every line end, and the middle of every third line.
      const cuts = [ends[3]];
      for (let i = 4; i < ends.length; i++) {
        if (i % 3 === 0) cuts.push(Math.floor((ends[i - 1] + ends[i]) / 2));
        cuts.push(ends[i]);
      }
      const checks = await grow(f.split('/').pop()!, text, cuts);
      assert.equal(checks, cuts.length - 1);
    }
  });

  it('a generated session (compactions, branches, errors, model switches), grown in bursts, gives the full read', async function () {
    this.timeout(120_000);
    const file = join(dir, 'generated-source.jsonl');
    const w = await writeSession(file, { bytes: 1_500_000, seed: 42, id: '019a0000-0000-7000-8000-00000000beef', cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 1) });
    assert.equal(w.requests, 483);
    const text0 = readFileSync(file, 'utf8');
    // The shapes the incremental path must continue across.
    assert.deepEqual(['"type":"compaction"', '"type":"branch_summary"', '"stopReason":"error"'].map((k) => text0.split(k).length - 1), [2, 3, 8]);
    const text = readFileSync(file, 'utf8');
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
    const cuts = [ends[50]];
    for (let i = 50 + 37; i < ends.length; i += 37) cuts.push(ends[i] - 5, ends[i]);
    cuts.push(text.length);
    await grow('generated.jsonl', text, cuts);
  });

  it('a truncated or rewritten file is read again from the start', async () => {
    const file = join(dir, 'rewrite.jsonl');
    const text = readFileSync(FIXTURES[1], 'utf8');
    writeFileSync(file, text);
    const live = await PiLiveSession.open(file);
    assert.equal(await live.update(), 'unchanged');
    truncateSync(file, text.indexOf('\n', 2000) + 1);
    assert.equal(await live.update(), 'reset');
    assert.equal(report(live.session()), report(await readPiSession(file)));
    writeFileSync(file, text.replace('"cwd":"', '"cwd":"/x'));
    assert.equal(await live.update(), 'reset');
    assert.equal(report(live.session()), report(await readPiSession(file)));
  });

  it('an appended entry reusing an earlier id is read again from the start (a full read links the earlier entry\'s children to it)', async () => {
    const file = join(dir, 'duplicate.jsonl');
    const lines = readFileSync(FIXTURES[1], 'utf8').trimEnd().split('\n');
    writeFileSync(file, `${lines.slice(0, 12).join('\n')}\n`);
    const live = await PiLiveSession.open(file);
    live.session();
    const dup = JSON.parse(lines[4]) as Record<string, unknown>;
    const last = JSON.parse(lines[11]) as { id: string };
    appendFileSync(file, `${JSON.stringify({ ...dup, parentId: last.id })}\n`);
    assert.equal(await live.update(), 'reset');
    const full = report(await readPiSession(file));
    assert.match(full, /duplicate entry id/);
    assert.equal(report(live.session()), full);
  });

  it('LiveAnalysis reports the appended request and the earlier ones whose estimate moved', async () => {
    const file = join(dir, 'analysis.jsonl');
    const lines = readFileSync(FIXTURES[1], 'utf8').trimEnd().split('\n');
    writeFileSync(file, `${lines.slice(0, 12).join('\n')}\n`);
    const [ref] = await findSessions(file);
    const live = await LiveAnalysis.open(ref);
    const before = live.report.requests.length;
    appendFileSync(file, `${lines.slice(12, 14).join('\n')}\n`);
    const u = await live.update();
    assert.equal(u.change, 'appended');
    assert.deepEqual(u.added.map((r) => r.index), [before + 1, before + 2].slice(0, u.report.requests.length - before));
    assert.equal(JSON.stringify(u.report), JSON.stringify(sessionReport(analyzeSession(await readPiSession(file)))));
    assert.deepEqual((await live.update()).added, []);
  });

  it('LiveAnalysis judges only the appended requests once the token model is fitted, with the results of a full analysis after every append', async function () {
    this.timeout(120_000);
    const file = join(dir, 'continued-source.jsonl');
    await writeSession(file, { bytes: 700_000, seed: 7, id: '019a0000-0000-7000-8000-00000000c0de', cwd: '/home/dev/q', startMs: Date.UTC(2026, 10, 2) });
    const text = readFileSync(file, 'utf8');
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
    const grown = join(dir, 'continued.jsonl');
    writeFileSync(grown, text.slice(0, ends[20]));
    const [ref] = await findSessions(grown);
    // A small fit limit so the model stops moving early; the full analysis uses the same one.
    const opts = { calibrationLimit: 12 };
    const full = async () => {
      const s = await readPiSession(grown);
      return JSON.stringify(attachPhux(sessionReport(analyzeSession(s, undefined, opts)), s));
    };
    const live = await LiveAnalysis.open(ref, opts);
    assert.equal(JSON.stringify(live.report), await full());
    let continued = 0;
    let steps = 0;
    let at = ends[20];
    for (let i = 20; i < ends.length; i += 1 + (i % 5)) {
      appendFileSync(grown, text.slice(at, ends[i]));
      at = ends[i];
      const u = await live.update();
      assert.equal(JSON.stringify(u.report), await full(), `after line ${i + 1}`);
      if (u.continued && u.change === 'appended') {
        continued++;
        assert.deepEqual(u.revised, []);
      }
      steps++;
    }
    assert.ok(steps > 100, `${steps} appends`);
    // Most appends after the fit: the earlier requests were kept, not judged again.
    assert.ok(continued > steps * 0.8, `${continued} of ${steps} appends continued`);
  });

  it('an append judged alone gives its entries at once and the session report when read, each equal to a full analysis (reports left unread between)', async function () {
    this.timeout(120_000);
    const file = join(dir, 'unread-source.jsonl');
    await writeSession(file, { bytes: 500_000, seed: 11, id: '019a0000-0000-7000-8000-00000000beef', cwd: '/home/dev/u', startMs: Date.UTC(2026, 10, 3) });
    const text = readFileSync(file, 'utf8');
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
    const grown = join(dir, 'unread.jsonl');
    writeFileSync(grown, text.slice(0, ends[30]));
    const [ref] = await findSessions(grown);
    const opts = { calibrationLimit: 12 };
    const full = async () => {
      const s = await readPiSession(grown);
      return attachPhux(sessionReport(analyzeSession(s, undefined, opts)), s);
    };
    const live = await LiveAnalysis.open(ref, opts);
    let at = ends[30];
    let alone = 0;
    let reads = 0;
    for (let i = 31; i < ends.length; i += 1 + (i % 3)) {
      appendFileSync(grown, text.slice(at, ends[i]));
      at = ends[i];
      const u = await live.update();
      const expected = await full();
      if (u.continued && u.change === 'appended') alone += u.added.length ? 1 : 0;
      // The new entries are those of a full analysis, and so are the ids the watch prints with them.
      const firstNew = expected.requests.length - u.added.length;
      assert.equal(JSON.stringify(u.added), JSON.stringify(expected.requests.slice(firstNew)), `after line ${i + 1}`);
      assert.equal(live.sessionId, expected.id);
      assert.equal(live.sessionPath, expected.path);
      // The report is read only every seventh step: built from what the unread appends kept.
      if (i % 7 === 0) {
        reads++;
        assert.equal(JSON.stringify(u.report), JSON.stringify(expected), `report after line ${i + 1}`);
      }
    }
    assert.ok(alone > 50, `${alone} appends judged alone`);
    assert.ok(reads > 10, `${reads} reports read`);
    assert.equal(JSON.stringify(live.report), JSON.stringify(await full()));
  });

  it('opened with the last line held back (the warm-up of large sessions), gives the full analysis at open and after appends', async function () {
    this.timeout(120_000);
    const gen = join(dir, 'warmup-source.jsonl');
    await writeSession(gen, { bytes: 400_000, seed: 5, id: '019a0000-0000-7000-8000-00000000aaaa', cwd: '/home/dev/w', startMs: Date.UTC(2026, 10, 4) });
    const one = join(dir, 'one-line.jsonl');
    writeFileSync(one, `${readFileSync(FIXTURES[0], 'utf8').split('\n')[0]}\n`);
    const partial = join(dir, 'partial-last.jsonl');
    const fixture = readFileSync(FIXTURES[1], 'utf8');
    writeFileSync(partial, fixture.slice(0, fixture.lastIndexOf('\n', fixture.length - 2) + 40)); // the last line half written
    for (const source of [...FIXTURES, gen, one, partial]) {
      const file = join(dir, `warm-${source.split('/').pop()}`);
      writeFileSync(file, readFileSync(source));
      const [ref] = await findSessions(file);
      const opts = { calibrationLimit: 12 };
      const full = async () => {
        const s = await readPiSession(file);
        return JSON.stringify(attachPhux(sessionReport(analyzeSession(s, undefined, opts)), s));
      };
      const live = await LiveAnalysis.open(ref, { ...opts, warmUpBytes: 0 });
      assert.equal(JSON.stringify(live.report), await full(), `${source} at open`);
      // A file of only its header too: read in full at open, then unchanged (live/unreadable-live.test.ts).
      assert.equal((await live.update()).change, 'unchanged', `${source}: the held-back line was read at open`);
      // Two more turns: the last two lines again with new ids.
      const lines = readFileSync(source, 'utf8').trimEnd().split('\n');
      if (lines.length < 3 || source === partial) continue;
      const [u, a] = lines.slice(-2).map((l) => JSON.parse(l) as { id?: string; parentId?: string });
      let parent = (JSON.parse(lines[lines.length - 1]) as { id: string }).id;
      for (let k = 0; k < 2; k++) {
        const nu = { ...u, id: `w${k}u`, parentId: parent };
        const na = { ...a, id: `w${k}a`, parentId: nu.id };
        parent = na.id;
        appendFileSync(file, `${JSON.stringify(nu)}\n${JSON.stringify(na)}\n`);
        const up = await live.update();
        assert.equal(JSON.stringify(up.report), await full(), `${source} after append ${k + 1}`);
      }
    }
  });
});
