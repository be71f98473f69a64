/**
 * Persona snapshot verdicts (ADR-0060 / ADR-0134) on the built BotHarness scenarios: exact
 * verdicts, snapshot hashes (SHA-256 of the body, 12 hex; checked independently with Python's
 * hashlib), byte offsets in the system prompt and before/after bytes.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { analyzeSession } from '../../../src/core/analyze.js';
import { judgePersona } from '../../../src/core/persona.js';
import { readBotHarnessSession } from '../../../src/hosts/botharness/index.js';
import { releaseReaders } from '../../../src/hosts/registry.js';
import { sessionReport, type SessionReport } from '../../../src/report/json.js';
import { buildScenarios, type Built } from './scenarios.js';

/** sha256 of the scenario bodies, first 12 hex (python3 hashlib over the same UTF-8 text). */
const H = { ada: 'e12061dff5db', soul2: '8e986229fc09', mem2: 'a83685f6cdf0', bea: 'cd78b5bd5947', empty: 'e3b0c44298fc' };
/** UTF-8 bytes before the persona section in the scenario system prompts (DSH's three sections + blank lines). */
const PERSONA_AT = 242;

describe('persona snapshot verdicts', () => {
  let built: Built;
  const reports: Record<string, SessionReport> = {};
  const report = async (id: string) => (reports[id] ??= sessionReport(analyzeSession(await readBotHarnessSession(built.logs[id]))));
  const kinds = (r: SessionReport) => r.persona!.events.map((e) => [e.request, e.kind]);
  before(async () => (built = await buildScenarios()));
  after(() => {
    releaseReaders();
    rmSync(built.main, { recursive: true, force: true });
    rmSync(built.old, { recursive: true, force: true });
  });

  it('persona taken on the first assembly; SOUL.md edited mid-session with the section unchanged: stable', async () => {
    const r = await report('bh-stable');
    assert.deepEqual(r.persona!.snapshot, { state: 'body', hash: H.ada, takenAt: '2026-10-08T08:00:02.000Z', botSlug: 'ada', bytes: 181 });
    assert.equal(r.persona!.verdict, 'stable');
    assert.deepEqual(kinds(r), [[1, 'taken'], [2, 'memory-inbox'], [2, 'stable'], [3, 'stable']]);
    const [taken, inbox, edited, resumed] = r.persona!.events;
    assert.deepEqual(taken, { request: 1, line: 6, kind: 'taken', detail: 'persona snapshot in the system prompt (181 bytes), taken at 2026-10-08T08:00:02.000Z', offset: PERSONA_AT, hash: H.ada });
    assert.equal(inbox.line, 10);
    assert.equal(edited.detail, 'SOUL.md edited (source event se-soul-1): persona section byte-identical to the snapshot');
    assert.equal(resumed.detail, 'system prompt re-sent (resume): persona section byte-identical to the snapshot');
    assert.deepEqual(r.requests.map((q) => q.verdict), ['cold', 'hit', 'hit']);
    assert.ok(r.requests.every((q) => !q.causes.some((c) => c.kind === 'persona-drift')));
  });

  it('a compaction refresh: refreshed at the first request after compaction/end (sanctioned, no persona-drift)', async () => {
    const r = await report('bh-compaction');
    assert.equal(r.persona!.verdict, 'refreshed');
    assert.deepEqual(kinds(r), [[1, 'taken'], [3, 'refreshed']]);
    const e = r.persona!.events[1];
    assert.equal(e.detail, 'persona snapshot refreshed at the compaction boundary (compaction/end line 15): sanctioned');
    assert.equal(e.offset, 268);
    assert.equal(e.hash, H.soul2);
    assert.equal(r.persona!.snapshot.hash, H.soul2); // the stored snapshot is the refreshed one
    assert.equal(r.persona!.events[0].hash, H.ada);
    // The break is in the system prompt, before the history the compaction replaced: both named,
    // the compaction first (the transcript's compaction/summary is message 0).
    assert.deepEqual(
      r.requests[2].causes.map((c) => [c.kind, c.certainty, c.detail]),
      [
        ['history-rewritten', 'certain', 'compaction: history replaced by a summary at message 0; system 0 changed with it'],
        ['system-changed', 'certain', 'block 0, line 7: ## Soul (SOUL.md) [1% — 70/5,000 chars]; heading `Soul (SOUL.md) [1% —` edited'],
      ],
    );
  });

  it('a planted drift: cause persona-drift with the before/after bytes; then a MEMORY.md change into the head', async () => {
    const r = await report('bh-drift');
    assert.equal(r.persona!.verdict, 'drift');
    assert.deepEqual(kinds(r), [[1, 'taken'], [3, 'drift'], [4, 'memory-head']]);
    const [, drift, head] = r.persona!.events;
    assert.deepEqual(drift, {
      request: 3,
      line: 17,
      kind: 'drift',
      detail: 'persona section changed outside a compaction (persona-drift): 181 → 201 bytes',
      offset: 268,
      before: '## Soul (SOUL.md) [1% — 50/5,000 chars]\n\nYou are Ada. You answer in short, exact sentences.\n\n## Core Memory (MEMORY.md) [1% — 34',
      after: '## Soul (SOUL.md) [1% — 70/5,000 chars]\n\nYou are Ada. You answer in short, exact sentences, and you cite files.\n\n## Core Memory (MEMORY.md) [1% — 34',
      excerptAt: 24, // `## Soul (SOUL.md) [1% — ` is the same
      hash: H.soul2,
    });
    assert.equal(head.offset, 385);
    assert.equal(head.excerptAt, 40); // 40 characters of context before the first changed one
    assert.equal(head.hash, H.mem2);
    assert.equal(head.after, "ite files.\n\n## Core Memory (MEMORY.md) [2% — 62/3,000 chars]\n\nThe user's project is Prefix Lens. Releases go out on Fridays.");
    assert.deepEqual(r.requests.map((q) => [q.verdict, q.causes.map((c) => c.kind)]), [
      ['cold', []],
      ['hit', []],
      ['break', ['system-changed', 'persona-drift']],
      ['break', ['system-changed', 'persona-drift']],
    ]);
    assert.deepEqual(r.persona!.notes, []);
  });

  it('an empty snapshot is a real snapshot (hash of the empty string), not "none"', async () => {
    const r = await report('bh-empty');
    assert.deepEqual(r.persona!.snapshot, { state: 'empty', hash: H.empty, takenAt: '2026-10-08T08:00:02.000Z', botSlug: 'blank', bytes: 0 });
    assert.equal(r.persona!.verdict, 'stable');
    assert.deepEqual(kinds(r), [[1, 'taken']]);
    const none = await report('bh-none');
    assert.deepEqual(none.persona!.snapshot, { state: 'none', hash: null, takenAt: null, botSlug: 'nora', bytes: null });
    assert.equal(none.persona!.verdict, 'none');
    assert.deepEqual(none.persona!.events, []);
    assert.deepEqual(none.persona!.notes, ['no persona snapshot taken yet (persona_snapshot is NULL): the Session contributes no persona']);
  });

  it('a re-owned Session: snapshot cleared and re-baselined to the new bot, not a drift', async () => {
    const r = await report('bh-reowned');
    assert.equal(r.persona!.verdict, 'reowned');
    assert.deepEqual(kinds(r), [[1, 'taken'], [3, 'reowned']]);
    const e = r.persona!.events[1];
    assert.equal(e.detail, 'Session re-owned to bot bea: snapshot cleared and re-baselined at 2026-10-08T08:00:11.000Z');
    assert.equal(e.offset, 268); // inside the section: the role prompt's change before it is the core's system-changed
    assert.equal(e.hash, H.bea);
    // The bot's name in the role prompt: 296 bytes of tools, then `"` + 48 (identity) + `\n\n` (4) + 47 + `\"` (2).
    assert.equal(r.requests[2].break!.byteOffset, 296 + 102);
    assert.ok(!r.requests[2].causes.some((c) => c.kind === 'persona-drift'));
  });

  it('a memory change delivered through the Inbox: at the bottom, cache-neutral (the next request hits)', async () => {
    const r = await report('bh-memory');
    assert.deepEqual(kinds(r), [[1, 'taken'], [2, 'memory-inbox'], [2, 'stable']]);
    assert.equal(r.persona!.events[1].detail, 'memory change delivered through the Bot Inbox at the bottom of the context (source event se-mem-1: MEMORY.md): cache-neutral');
    assert.equal(r.persona!.events[1].line, 9);
    assert.deepEqual(r.requests.map((q) => q.verdict), ['cold', 'hit']);
  });

  it('a database without the snapshot columns (generation 6): a diagnostic and an unknown snapshot, not a crash', async () => {
    const s = await readBotHarnessSession(built.logs['bh-old']);
    assert.deepEqual(s.diagnostics.map((d) => [d.line, d.severity, d.message]), [
      [0, 'warning', 'session_ownership has no persona_snapshot / persona_snapshot_at columns (schema generation 6): an older BotHarness generation (the snapshot arrives in generation 9); persona verdicts unknown'],
    ]);
    const r = sessionReport(analyzeSession(s));
    assert.equal(r.requests.length, 1);
    assert.deepEqual(r.persona!.snapshot, { state: 'unknown', hash: null, takenAt: null, botSlug: 'ada', bytes: null });
    assert.equal(r.persona!.verdict, 'unknown');
  });

  it('judgePersona alone: the section is carried across a change after it (a later section edited)', () => {
    const body = 'PERSONA';
    const rep = judgePersona({
      snapshot: { body, takenAt: '2026-01-01T00:00:00.000Z', botSlug: 'b', provenance: 'created' },
      snapshotColumns: true,
      memoryChanges: [],
      requests: [
        { index: 1, line: 1, timeMs: 1, system: `head\n\n${body}\n\ntail v1`, headerReason: 'initial', compactionLine: null, inbox: [] },
        { index: 2, line: 2, timeMs: 2, system: `head changed\n\n${body}\n\ntail v2`, headerReason: 'change', compactionLine: null, inbox: [] },
      ],
    });
    assert.equal(rep.verdict, 'stable');
    assert.deepEqual(rep.events.map((e) => [e.kind, e.offset, e.detail]), [
      ['taken', 6, 'persona snapshot in the system prompt (7 bytes), taken at 2026-01-01T00:00:00.000Z'],
      ['stable', 14, 'system prompt re-sent (change), changed outside the persona section: persona section byte-identical to the snapshot'],
    ]);
  });
});
