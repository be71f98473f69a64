/**
 * Ground truth for the capture join on the real OpenCode, recorded through `prefix-lens capture`
 * in front of the scripted provider (CAPTURE=1 scripts/record/record-opencode.sh): the committed
 * recording test/fixtures/opencode-capture (exact values), and, when PREFIX_LENS_FRESH_OPENCODE_CAPTURE
 * names a fresh one (CI records one per run), that too against the provider's own copy of the
 * bodies. `analyze` without `--requests` finds each session's bodies by OpenCode's `x-session-id`
 * (one capture folder per session) and analyzes it in wire mode.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../../src/report/json.js';
import { analyzeJson, essence } from './wire-essence.js';
import { sessionIds } from '../opencode/helpers.js';

const FX = 'test/fixtures/opencode-capture';

const bodies = (caps: string) => readdirSync(caps).flatMap((d) => readdirSync(join(caps, d)).filter((f) => f.endsWith('.body.json')).map((f) => join(caps, d, f)));

describe('OpenCode through the capture proxy (committed recording)', () => {
  const ids = sessionIds(FX);
  let report: Report;
  const session = (id: string) => report.sessions.find((s) => s.id === id)!;
  before(async () => {
    report = await analyzeJson(['--captures', join(FX, 'captures'), join(FX, 'opencode.db')]);
  });

  it('the proxy saved the 39 bodies in one folder per x-session-id, without the API keys', () => {
    const folders = readdirSync(join(FX, 'captures')).sort();
    assert.deepEqual(folders, [...Object.values(ids.sessions), ...Object.keys(ids.children)].map((id) => `session-${id}`).sort());
    assert.equal(bodies(join(FX, 'captures')).length, 39);
    for (const f of bodies(join(FX, 'captures'))) {
      for (const file of [f, f.replace(/\.body\.json$/, '.meta.json')]) {
        const text = readFileSync(file, 'utf8');
        assert.ok(!text.includes('sk-fake') && !text.includes('sk-ant-fake'), file);
      }
      assert.match(readFileSync(f.replace(/\.body\.json$/, '.meta.json'), 'utf8'), /"(authorization|x-api-key)": "<redacted>"/);
    }
  });

  it('every session is analyzed in wire mode without --requests, with the verdicts of the recording', () => {
    const verdicts = (id: string) => session(id).requests.map((r) => [r.kind, r.evidence, r.verdict].join(' '));
    const t = 'title wire below-minimum';
    assert.deepEqual(verdicts(ids.sessions.basic), [t, 'agent wire cold', 'agent wire hit', 'agent wire hit', 'agent wire hit', 'agent wire model-switch', 'agent wire hit']);
    assert.deepEqual(verdicts(ids.sessions.anthropic), [t, 'agent wire cold', 'agent wire hit', 'agent wire hit', 'agent wire hit', 'agent wire hit']);
    assert.deepEqual(verdicts(Object.keys(ids.children)[0]), ['agent wire cold']);
    assert.deepEqual(verdicts(ids.sessions.compaction), [t, 'agent wire cold', 'agent wire hit', 'agent wire hit', 'agent wire hit', 'summary wire below-minimum', 'agent wire break', 'agent wire hit', 'summary wire below-minimum', 'agent wire break']);
    assert.deepEqual(verdicts(ids.sessions.phuxV1), [t, 'agent wire cold', 'agent wire hit', 'agent wire hit', 'agent wire hit', 'agent wire hit', 'summary wire cold', 'agent wire break', 'agent wire hit']);
    assert.deepEqual(verdicts(ids.sessions.phuxV2), [t, 'agent wire cold', 'agent wire hit', 'agent wire hit', 'agent wire break', 'agent wire hit']);
    for (const s of report.sessions) {
      assert.equal(s.evidence, 'wire', s.id);
      assert.match(s.diagnostics.find((d) => d.severity === 'info')!.message, /^capture proxy: \d+ captured request bod(y|ies) joined/);
      assert.deepEqual(s.diagnostics.filter((d) => d.severity !== 'info'), [], s.id);
    }
  });

  it('the breaks the real bodies show: compaction rewrites the history, the phux V2 delta changes system[1]', () => {
    const breaks = (id: string) => session(id).requests.filter((r) => r.break).map((r) => [r.index, r.kind, r.break!.segment, r.break!.path, r.break!.byteOffset, r.causes.map((c) => c.kind).join('+')]);
    // The same breaks and byte offsets as the provider's copy of the committed recording (test/unit/opencode/groundtruth.test.ts).
    assert.deepEqual(breaks(ids.sessions.compaction), [
      [7, 'agent', 'messages', 'messages[1].content', 10747, 'history-rewritten'],
      // The manual compaction's summary request (#9, below the minimum) is not compared with the
      // auto compaction's (#6): each is a prompt of its own (it was "history-rewritten" at byte 834).
      [10, 'agent', 'messages', 'messages[3].content', 10989, 'history-rewritten'],
    ]);
    assert.deepEqual(
      session(ids.sessions.compaction).requests.filter((r) => r.kind !== 'agent').map((r) => [r.index, r.number, r.kind, r.verdict, r.matchedNumber]),
      [[1, '0.1', 'title', 'below-minimum', null], [6, '4.1', 'summary', 'below-minimum', null], [9, '6.1', 'summary', 'below-minimum', null]],
    );
    assert.deepEqual(breaks(ids.sessions.phuxV1), [[8, 'agent', 'messages', 'messages[1].content', 10770, 'history-rewritten']]);
    assert.deepEqual(breaks(ids.sessions.phuxV2), [[5, 'agent', 'system', 'messages[1].content', 10808, 'system-changed+phux-context-in-head']]);
  });

  it('a request whose body was not captured stays reconstructed and says so; the others keep wire evidence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-occap-'));
    try {
      cpSync(join(FX, 'captures'), join(dir, 'captures'), { recursive: true });
      const folder = join(dir, 'captures', `session-${ids.sessions.basic}`);
      // The third body of the basic session: its second agent request (the read tool call).
      for (const f of readdirSync(folder).filter((n) => n.startsWith('000003-'))) rmSync(join(folder, f));
      const r = await analyzeJson(['--captures', join(dir, 'captures'), join(FX, 'opencode.db')]);
      const s = r.sessions.find((x) => x.id === ids.sessions.basic)!;
      assert.equal(s.evidence, 'mixed');
      assert.deepEqual(s.requests.map((q) => q.evidence), ['wire', 'wire', 'reconstructed', 'wire', 'wire', 'wire', 'wire']);
      assert.ok(s.requests[2].notes.includes('no captured body: reconstructed from the database'), s.requests[2].notes.join(' | '));
      assert.equal(r.sessions.find((x) => x.id === ids.sessions.anthropic)!.evidence, 'wire');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without captures the same database is reconstructed (the join is what makes it wire)', async () => {
    // An empty capture folder (one that does not exist is a usage error).
    const empty = mkdtempSync(join(tmpdir(), 'prefix-lens-no-captures-'));
    try {
      const r = await analyzeJson(['--captures', empty, join(FX, 'opencode.db')]);
      assert.ok(r.sessions.every((s) => s.evidence === 'reconstructed'));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

const fresh = process.env.PREFIX_LENS_FRESH_OPENCODE_CAPTURE;
if (fresh && existsSync(join(fresh, 'captures'))) {
  describe('OpenCode through the capture proxy (fresh recording)', () => {
    it('the proxy saved every body the provider received, byte for byte', () => {
      const provider = readdirSync(join(fresh, 'requests')).filter((f) => f.endsWith('.body.json')).map((f) => readFileSync(join(fresh, 'requests', f)).toString('base64')).sort();
      assert.deepEqual(bodies(join(fresh, 'captures')).map((f) => readFileSync(f).toString('base64')).sort(), provider);
    });

    it('analyze finds the bodies by itself: the same wire analysis as --requests on the provider’s copy', async () => {
      const db = join(fresh, 'opencode.db');
      const auto = await analyzeJson(['--captures', join(fresh, 'captures'), db]);
      const given = await analyzeJson(['--requests', join(fresh, 'requests'), db]);
      assert.equal(auto.sessions.length, given.sessions.length);
      for (const s of auto.sessions) {
        const g = given.sessions.find((x) => x.id === s.id)!;
        assert.equal(s.evidence, 'wire', s.id);
        assert.deepEqual(s.requests.map(essence), g.requests.map(essence), s.id);
      }
    });
  });
}
