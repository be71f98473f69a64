/**
 * Ground truth for Claude Code's auto-compaction (test/fixtures/claude-code-autocompact): the real
 * host compacted on its own (compact_boundary trigger "auto", then the isCompactSummary message),
 * the compaction call is on the wire only, and the break at the compaction is found from the
 * transcript alone in the same segment and item as in the real bodies, named as the compaction.
 * Runs on the committed recording and on a fresh one when PREFIX_LENS_FRESH_CLAUDE_CODE_AUTOCOMPACT
 * names it (CI records one per run).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type RequestAnalysis, type SessionAnalysis } from '../../../src/core/analyze.js';
import { firstDiff } from '../../../src/core/diverge.js';
import type { Session } from '../../../src/core/model.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { sessionReport } from '../../../src/report/json.js';
import { mainTranscript } from '../claude-code/helpers.js';
import { headTokens } from './provider-tokens.js';
import { scenarios } from './scenarios.js';


interface Meta {
  status: number;
  responseId: string | null;
  usage: { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number; output_tokens: number } | null;
  decision: { kind: string; padInput?: number };
}

/** Claude Code 2.1.328's auto-compact threshold for a 200,000-token window: 200,000 − 20,000 − 13,000. */
const THRESHOLD = 167_000;

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const where = (r: RequestAnalysis) => (r.break ? `${r.break.segment}[${r.break.blockIndex}]` : null);

for (const sc of scenarios('test/fixtures/claude-code-autocompact', 'PREFIX_LENS_FRESH_CLAUDE_CODE_AUTOCOMPACT')) {
  describe(`Claude Code auto-compaction ground truth (${sc.name})`, () => {
    let file: string;
    let recon: Session;
    let wire: Session;
    let reconA: SessionAnalysis;
    let wireA: SessionAnalysis;
    let metas: Meta[];
    let bodies: string[];
    before(async () => {
      file = mainTranscript(sc.dir);
      const r = await readClaudeSession(file);
      const w = await readClaudeSession(file, { requestsDir: join(sc.dir, 'requests') });
      assert.equal(r.length, 1, 'no sub-agent: the compaction call is not written as one');
      [recon, wire] = [r[0], w[0]];
      reconA = analyzeSession(recon);
      wireA = analyzeSession(wire);
      bodies = readdirSync(join(sc.dir, 'requests')).filter((f) => f.endsWith('.body.json')).sort();
      metas = bodies.map((b) => JSON.parse(readFileSync(join(sc.dir, 'requests', b.replace('.body.json', '.meta.json')), 'utf8')) as Meta);
    });

    it('the host compacted by itself: a compact_boundary with trigger auto above the threshold, then the summary message', () => {
      const all = lines(file);
      const at = all.findIndex((o) => o.type === 'system' && o.subtype === 'compact_boundary');
      assert.ok(at > 0);
      const b = all[at] as { parentUuid: unknown; logicalParentUuid: unknown; compactMetadata: { trigger: string; preTokens: number } };
      assert.equal(b.parentUuid, null);
      assert.equal(typeof b.logicalParentUuid, 'string');
      assert.equal(b.compactMetadata.trigger, 'auto');
      // What the host believed it had: the scripted answer before it reported 170,000 extra input tokens.
      const grown = metas.find((m) => m.decision.padInput)!;
      const believed = grown.usage!.input_tokens + grown.usage!.cache_read_input_tokens + grown.usage!.cache_creation_input_tokens + grown.usage!.output_tokens;
      assert.equal(grown.decision.padInput, 170_000);
      assert.ok(believed > THRESHOLD && b.compactMetadata.preTokens >= believed, `${believed} / ${b.compactMetadata.preTokens}`);
      const summary = all.slice(at + 1).find((o) => o.type === 'user');
      assert.equal(summary?.isCompactSummary, true);
      assert.deepEqual(recon.events, [{ kind: 'compaction', line: at + 1, timeMs: Date.parse(String((all[at] as { timestamp: string }).timestamp)) }]);
      if (sc.name === 'committed') assert.deepEqual([at + 1, b.compactMetadata.preTokens], [45, 191946]);
    });

    it('has 4 transcript requests and 5 bodies: the compaction call (3rd body) only on the wire', () => {
      assert.deepEqual(recon.diagnostics, []);
      assert.equal(recon.requests.length, 4);
      assert.equal(bodies.length, 5);
      assert.deepEqual(metas.map((m) => m.decision.kind), ['text', 'text', 'summary', 'text', 'text']);
      assert.deepEqual(wire.requests.map((r) => r.kind), ['agent', 'agent', 'summary', 'agent', 'agent']);
      assert.equal(wire.requests[2].source.file, join(sc.dir, 'requests', bodies[2]));
      assert.ok(wire.requests.filter((r) => r.kind === 'agent').every((r) => r.evidence === 'wire' && r.source.file === file));
    });

    it('rebuilds every transcript request byte for byte: the same prefix hash as its body', () => {
      const agents = wireA.requests.filter((r) => r.request.kind === 'agent');
      assert.deepEqual(reconA.requests.map((r) => r.prefixHash), agents.map((r) => r.prefixHash));
    });

    it('breaks at the compaction: the first request after it, at system[0] from the transcript and from the bodies', () => {
      assert.deepEqual(reconA.requests.map((r) => r.verdict), ['cold', 'hit', 'break', 'hit']);
      assert.deepEqual(reconA.requests.map(where), [null, null, 'system[0]', null]);
      const agents = wireA.requests.filter((r) => r.request.kind === 'agent');
      assert.deepEqual(agents.map((r) => r.verdict), ['cold', 'hit', 'break', 'hit']);
      assert.deepEqual(agents.map(where), [null, null, 'system[0]', null]);
      // Named as the compaction: the billing header's fingerprint follows the first user text, now the summary.
      const c = reconA.requests[2].causes;
      assert.deepEqual(c.map((x) => x.kind), ['history-rewritten', 'system-changed']);
      assert.equal(c[0].detail, 'compaction: history replaced by a summary; system 0 is derived from the history');
      // From the bodies too: the transcript's knowledge of system[0] is carried to the body's block.
      assert.deepEqual(agents[2].causes.map((x) => [x.kind, x.detail]).slice(0, 1), [[c[0].kind, c[0].detail]]);
      assert.deepEqual(agents[2].causes.map((x) => x.kind), ['history-rewritten', 'system-changed']);
      // The whole prefix is written again (the synthetic cache reads nothing of the old one). What
      // the break re-bills is what the cache would have served had the billing header stayed: the
      // tools and system blocks through the system breakpoint, the same in both bodies (the history
      // after them is the summary, new). The provider's own count of them (ceil(bytes/4) of its
      // canonical text) is the measure; ours is the byte estimate, within 3 %.
      const u = reconA.requests[2].request.usage!;
      assert.equal(u.cacheRead, 0);
      const body = (i: number) => JSON.parse(readFileSync(join(sc.dir, 'requests', bodies[i]), 'utf8')) as Parameters<typeof headTokens>[0];
      const served = headTokens(body(3));
      assert.equal(served, headTokens(body(2)));
      for (const lost of [reconA.requests[2].lostTokens, agents[2].lostTokens]) {
        assert.ok(Math.abs(lost - served) <= served * 0.03, `re-billed ${lost}, the provider counts ${served} tokens through the system breakpoint`);
      }
    });

    it('reports the wire break at the exact byte offset of the first changed byte of the body', () => {
      const w = wireA.requests.find((r) => r.break && r.request.kind === 'agent')!;
      const note = w.request.notes!.find((x) => x.startsWith('wire: '))!;
      const body = readFileSync(join(sc.dir, 'requests', note.slice(6)));
      const after = Buffer.from(w.break!.after);
      const at = body.indexOf(after, Math.max(0, w.break!.byteOffset - after.length));
      assert.ok(at >= 0 && at <= w.break!.byteOffset && w.break!.byteOffset < at + after.length);
      assert.equal(firstDiff(Buffer.from(w.break!.before), after), w.break!.byteOffset - at);
      assert.equal(note.slice(6), bodies[3]);
    });

    it("Claude Code's own verdict agrees on every request: previous_message_not_found, no miss, system_changed, no miss", () => {
      const rep = sessionReport(reconA);
      assert.deepEqual(rep.requests.map((r) => [r.hostMiss?.type, r.hostMiss?.agrees]), [
        ['previous_message_not_found', true],
        [null, true],
        ['system_changed', true],
        [null, true],
      ]);
      assert.equal(rep.requests[2].hostMiss!.missedTokens, reconA.requests[2].request.usage!.cacheWrite);
      assert.deepEqual(rep.hostMiss, { host: 'Claude Code', requests: 4, agree: 4, disagree: 0, notCompared: 0, disagreeing: [] });
    });

    it('usage oracle: per request, usage equals what the provider returned, to the token', () => {
      const byId = new Map(metas.filter((m) => m.responseId).map((m) => [m.responseId!, m]));
      for (const r of recon.requests) {
        const u = byId.get(r.responseId!)!.usage!;
        assert.deepEqual(r.usage, { uncached: u.input_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens, output: u.output_tokens }, `#${r.index}`);
      }
      const total = (xs: Array<{ uncached: number | null; cacheRead: number | null; cacheWrite: number | null; output: number | null }>) => xs.reduce((a, u) => a + u.uncached! + u.cacheRead! + u.cacheWrite! + u.output!, 0);
      const provider = metas.map((m) => ({ uncached: m.usage!.input_tokens, cacheRead: m.usage!.cache_read_input_tokens, cacheWrite: m.usage!.cache_creation_input_tokens, output: m.usage!.output_tokens }));
      assert.equal(total(wire.requests.map((r) => r.usage!)), total(provider));
      assert.equal(total(recon.requests.map((r) => r.usage!)), total(provider) - total([provider[2]]));
    });
  });
}
