/**
 * Ground truth for Claude Code: the requests rebuilt from the transcript alone are the requests
 * Claude Code really sent (the recorder's bodies), and usage equals what the provider returned.
 * Runs on the committed recording and, when PREFIX_LENS_FRESH_CLAUDE_CODE names a fresh one (CI
 * records one per run), on that too — so a new Claude Code version or a reader bug shows up.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type RequestAnalysis, type SessionAnalysis } from '../../../src/core/analyze.js';
import { firstDiff } from '../../../src/core/diverge.js';
import type { Session } from '../../../src/core/model.js';
import { billingText, readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { mainTranscript } from '../claude-code/helpers.js';
import { scenarios } from './scenarios.js';


interface Meta {
  n: number;
  status: number;
  responseId: string | null;
  usage: { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number; output_tokens: number; cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } } | null;
  decision: { kind: string };
}

const PREFIX = new Set(['tools', 'system', 'messages', 'head']);
const prefixBreak = (r: RequestAnalysis) => (r.break && PREFIX.has(r.break.segment) ? r.break : null);

for (const sc of scenarios('test/fixtures/claude-code', 'PREFIX_LENS_FRESH_CLAUDE_CODE')) {
  describe(`Claude Code ground truth (${sc.name})`, () => {
    let recon: Session[];
    let wire: Session[];
    let reconA: SessionAnalysis[];
    let wireA: SessionAnalysis[];
    let bodies: string[];
    let metas: Meta[];
    before(async () => {
      const file = mainTranscript(sc.dir);
      recon = await readClaudeSession(file);
      wire = await readClaudeSession(file, { requestsDir: join(sc.dir, 'requests') });
      reconA = recon.map((s) => analyzeSession(s));
      wireA = wire.map((s) => analyzeSession(s));
      bodies = readdirSync(join(sc.dir, 'requests')).filter((f) => f.endsWith('.body.json')).sort();
      metas = bodies.map((b) => JSON.parse(readFileSync(join(sc.dir, 'requests', b.replace('.body.json', '.meta.json')), 'utf8')) as Meta);
    });

    it('reads the session and its sub-agent as two sessions, the sub-agent linked to its parent', () => {
      assert.equal(recon.length, 2);
      assert.equal(recon[1].parentId, recon[0].id);
      assert.equal(recon[1].title, 'general-purpose: Scripted sub-task');
      for (const s of recon) assert.deepEqual(s.diagnostics, [], s.path);
    });

    it('has one wire request per captured body, and every transcript request matched to its body', () => {
      assert.equal(wire.reduce((n, s) => n + s.requests.length, 0), bodies.length);
      const reconCount = recon.reduce((n, s) => n + s.requests.length, 0);
      const matched = wire.flatMap((s) => s.requests).filter((r) => r.source.file.endsWith('.jsonl'));
      assert.equal(matched.length, reconCount);
      assert.ok(matched.every((r) => r.evidence === 'wire'));
      // What the transcript does not have: Claude Code's compaction call.
      const only = wire.flatMap((s) => s.requests).filter((r) => !r.source.file.endsWith('.jsonl'));
      assert.deepEqual(only.map((r) => r.kind), ['summary']);
      assert.deepEqual(only.map((r) => metas[bodies.indexOf(r.source.file.split('/').pop()!)].decision.kind), ['summary']);
    });

    it('rebuilds every request byte for byte: the same prefix hash and parameters as its body', () => {
      let n = 0;
      recon.forEach((s, si) => {
        s.requests.forEach((r, i) => {
          const w = wire[si].requests.find((x) => x.source.file === r.source.file && x.source.line === r.source.line)!;
          assert.equal(reconA[si].requests[i].prefixHash, wireA[si].requests[w.index - 1].prefixHash, `${s.id} #${r.index} (line ${r.source.line})`);
          assert.deepEqual(r.params, w.params, `${s.id} #${r.index} params`);
          n++;
        });
      });
      assert.equal(n, 13);
    });

    it('finds, for every transcript request, the same break segment, message index, verdict and cause kinds as the real bodies', () => {
      recon.forEach((s, si) => {
        reconA[si].requests.forEach((r) => {
          const w = wireA[si].requests.find((x) => x.request.source.file === r.request.source.file && x.request.source.line === r.request.source.line)!;
          const wb = prefixBreak(w);
          const rb = prefixBreak(r);
          const where = `${s.id} line ${r.request.source.line}`;
          assert.equal(rb?.segment ?? null, wb?.segment ?? null, where);
          assert.equal(rb?.blockIndex ?? null, wb?.blockIndex ?? null, where);
          assert.equal(r.verdict, w.verdict, where);
          // What the transcript knows of a block (the billing header follows a compaction summary)
          // names the cause from the bodies too.
          assert.deepEqual(w.causes.map((c) => c.kind), r.causes.map((c) => c.kind), where);
        });
      });
    });

    it('computes the billing-header system block of every body (not recorded in the transcript)', () => {
      for (const b of bodies) {
        const body = JSON.parse(readFileSync(join(sc.dir, 'requests', b), 'utf8')) as { system: Array<{ text: string }>; messages: Array<{ content: unknown }> };
        const first = body.messages[0].content as Array<{ type: string; text?: string }>;
        const text = typeof first === 'string' ? first : first.find((x) => x.type === 'text' && !x.text!.startsWith('<system-reminder>'))!.text!;
        const subagent = body.system[0].text.includes('cc_is_subagent');
        assert.equal(billingText(text, '2.1.328', 'sdk-cli', subagent), body.system[0].text, b);
      }
    });

    it('reports wire breaks at the exact byte offset of the first changed byte of the body', () => {
      let checked = 0;
      wireA.forEach((sa) => {
        for (const w of sa.requests) {
          const b = prefixBreak(w);
          if (!b) continue;
          const body = readFileSync(w.request.source.file.endsWith('.jsonl') ? join(sc.dir, 'requests', bodies[bodyIndex(w.request.notes)]) : w.request.source.file);
          const after = Buffer.from(b.after);
          const at = body.indexOf(after, Math.max(0, b.byteOffset - after.length));
          assert.ok(at >= 0 && at <= b.byteOffset && b.byteOffset < at + after.length, `#${w.request.index}: offset ${b.byteOffset} outside the excerpt`);
          assert.equal(firstDiff(Buffer.from(b.before), after), b.byteOffset - at, `#${w.request.index}`);
          checked++;
        }
      });
      // The compaction's system[0] change, in the session (the retry's string/block change was read past: no break).
      assert.ok(checked >= 1, `wire breaks checked: ${checked}`);
    });

    it('usage oracle: per request and in total, usage equals what the provider returned, to the token', () => {
      const byId = new Map(metas.filter((m) => m.responseId).map((m) => [m.responseId!, m]));
      const sum = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
      for (const s of recon) {
        for (const r of s.requests) {
          if (!r.responseId) {
            assert.equal(r.usage, null, `${s.id} #${r.index}: a failed attempt has no usage`);
            continue;
          }
          const u = byId.get(r.responseId)!.usage!;
          assert.deepEqual(r.usage, { uncached: u.input_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens, output: u.output_tokens }, `${s.id} #${r.index}`);
          const split = `cache write: ${u.cache_creation.ephemeral_5m_input_tokens} tokens 5 m, ${u.cache_creation.ephemeral_1h_input_tokens} tokens 1 h`;
          if (u.cache_creation_input_tokens) assert.ok(r.notes?.includes(split), `${s.id} #${r.index}: ${split}`);
          for (const k of Object.keys(sum) as Array<keyof typeof sum>) sum[k] += r.usage![k];
        }
      }
      // The provider's totals = the transcript's + the compaction call's (not in the transcript).
      const total = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
      const compaction = { ...total };
      for (const m of metas) {
        if (!m.usage) continue;
        const u = { uncached: m.usage.input_tokens, cacheRead: m.usage.cache_read_input_tokens, cacheWrite: m.usage.cache_creation_input_tokens, output: m.usage.output_tokens };
        for (const k of Object.keys(total) as Array<keyof typeof total>) {
          total[k] += u[k];
          if (m.decision.kind === 'summary') compaction[k] += u[k];
        }
      }
      for (const k of Object.keys(total) as Array<keyof typeof total>) assert.equal(sum[k] + compaction[k], total[k], k);
      // Wire mode has every call: its session totals add up to the provider's exactly.
      const wt = wireA.reduce((acc, a) => ({ uncached: acc.uncached + a.totals.uncached, cacheRead: acc.cacheRead + a.totals.cacheRead, cacheWrite: acc.cacheWrite + a.totals.cacheWrite, output: acc.output + a.totals.output }), { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 });
      assert.deepEqual(wt, total);
    });
  });
}

/** Body index named by a wire request's `wire: NNN-….body.json` note. */
function bodyIndex(notes: string[] | undefined): number {
  const n = (notes ?? []).find((x) => x.startsWith('wire: '))!;
  return Number(/wire: (\d+)-/.exec(n)![1]) - 1;
}
