/**
 * Ground truth for Codex: the requests rebuilt from the rollout alone break where the requests
 * Codex really sent (the recorder's bodies) first diverge, and usage equals what the provider
 * returned. Runs on the committed recording and, when PREFIX_LENS_FRESH_CODEX names a fresh one
 * (CI records one per run), on that too.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type RequestAnalysis, type SessionAnalysis } from '../../../src/core/analyze.js';
import { blocksOf } from '../../../src/core/chain.js';
import { firstDiff } from '../../../src/core/diverge.js';
import type { Session } from '../../../src/core/model.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { rollout } from '../codex/helpers.js';
import { scenarios } from './scenarios.js';


interface Meta {
  status: number;
  responseId: string | null;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number } | null;
  decision: { kind: string };
}

const PREFIX = new Set(['tools', 'system', 'messages', 'head']);
const prefixBreak = (r: RequestAnalysis) => (r.break && PREFIX.has(r.break.segment) ? r.break : null);
const sameRequest = (a: RequestAnalysis, b: RequestAnalysis) => a.request.source.file === b.request.source.file && a.request.source.line === b.request.source.line;

for (const sc of scenarios('test/fixtures/codex', 'PREFIX_LENS_FRESH_CODEX')) {
  describe(`Codex ground truth (${sc.name})`, () => {
    let recon: Session;
    let wire: Session;
    let reconA: SessionAnalysis;
    let wireA: SessionAnalysis;
    let bodies: string[];
    let metas: Meta[];
    before(async () => {
      const file = rollout(sc.dir);
      [recon] = await readCodexSession(file);
      [wire] = await readCodexSession(file, { requestsDir: join(sc.dir, 'requests') });
      reconA = analyzeSession(recon);
      wireA = analyzeSession(wire);
      bodies = readdirSync(join(sc.dir, 'requests')).filter((f) => f.endsWith('.body.json')).sort();
      metas = bodies.map((b) => JSON.parse(readFileSync(join(sc.dir, 'requests', b.replace('.body.json', '.meta.json')), 'utf8')) as Meta);
    });

    it('has one request per model response, the compaction call included; the failed attempt only on the wire', () => {
      assert.deepEqual(recon.diagnostics, []);
      assert.equal(recon.requests.length, metas.filter((m) => m.status === 200).length);
      assert.deepEqual(recon.requests.map((r) => r.kind), metas.filter((m) => m.status === 200).map((m) => (m.decision.kind === 'summary' ? 'summary' : 'agent')));
      assert.equal(wire.requests.length, bodies.length);
      assert.deepEqual(wire.requests.filter((r) => r.error).map((r) => r.error), ['HTTP 500']);
      assert.ok(recon.requests.every((r) => r.cacheKey === recon.id));
    });

    it('rebuilds every input item after the leading ones byte for byte (the same message blocks as the body)', () => {
      let n = 0;
      for (const r of recon.requests.filter((x) => x.kind === 'agent')) {
        const w = wire.requests.find((x) => x.source.file === r.source.file && x.source.line === r.source.line)!;
        const rb = blocksOf(r.tail).filter((b) => b.segment === 'messages');
        const wb = blocksOf(w.tail).filter((b) => b.segment === 'messages');
        assert.deepEqual(rb.map((b) => [b.path, Buffer.from(b.bytes).toString('utf8')]), wb.map((b) => [b.path, Buffer.from(b.bytes).toString('utf8')]), `line ${r.source.line}`);
        n++;
      }
      assert.equal(n, recon.requests.length - 1);
    });

    it('finds, for every request (the compaction call too), the same verdict, break segment and message index as the real bodies', () => {
      for (const r of reconA.requests) {
        const w = wireA.requests.find((x) => sameRequest(x, r))!;
        const wb = prefixBreak(w);
        const rb = prefixBreak(r);
        const where = `line ${r.request.source.line}`;
        if (!wb) {
          assert.equal(rb, null, where);
          continue;
        }
        assert.ok(rb, `${where}: the bodies break at ${wb.segment}[${wb.blockIndex}]`);
        // The leading developer items after the instructions (system[0]) are recorded as sent.
        if (wb.segment === 'messages' || (wb.segment === 'system' && wb.blockIndex > 0)) assert.deepEqual([rb.segment, rb.blockIndex], [wb.segment, wb.blockIndex], where);
        // Tools and instructions are not recorded: one opaque head stands for them.
        else assert.equal(rb.segment, 'head', where);
        assert.equal(r.verdict, w.verdict, where);
      }
      // The first request after the compaction breaks at system[1] (the leading developer item is
      // gone from the replacement history), in both modes.
      assert.deepEqual(wireA.requests.filter((x) => x.break).map((x) => `${x.break!.segment}[${x.break!.blockIndex}]`), ['system[1]']);
    });

    it('reports wire breaks at the exact byte offset of the first changed byte of the body', () => {
      let checked = 0;
      for (const w of wireA.requests) {
        const b = prefixBreak(w);
        if (!b) continue;
        const note = w.request.notes!.find((x) => x.startsWith('wire: '))!;
        const body = readFileSync(join(sc.dir, 'requests', note.slice(6)));
        const after = Buffer.from(b.after);
        const at = body.indexOf(after, Math.max(0, b.byteOffset - after.length));
        assert.ok(at >= 0 && at <= b.byteOffset && b.byteOffset < at + after.length, `#${w.request.index}`);
        if (b.oldBlock?.segment === b.newBlock?.segment) assert.equal(firstDiff(Buffer.from(b.before), after), b.byteOffset - at, `#${w.request.index}`);
        // An item replaced by one of another segment (the leading developer item gone after the
        // compaction): the core locates the break at the start of the new item.
        else assert.equal(body.indexOf(after), b.byteOffset, `#${w.request.index}`);
        checked++;
      }
      assert.equal(checked, 1);
    });

    it('usage oracle: per request and in total, usage equals what the provider returned, to the token', () => {
      const byId = new Map(metas.filter((m) => m.responseId).map((m) => [m.responseId!, m]));
      const total = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
      for (const r of recon.requests) {
        const u = byId.get(r.responseId!)!.usage!;
        const cached = u.input_tokens_details.cached_tokens;
        assert.deepEqual(r.usage, { uncached: u.input_tokens - cached, cacheRead: cached, cacheWrite: 0, output: u.output_tokens }, `line ${r.source.line}`);
        for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += r.usage![k];
      }
      const provider = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
      for (const m of metas) {
        if (!m.usage) continue;
        provider.uncached += m.usage.input_tokens - m.usage.input_tokens_details.cached_tokens;
        provider.cacheRead += m.usage.input_tokens_details.cached_tokens;
        provider.output += m.usage.output_tokens;
      }
      assert.deepEqual(total, provider);
      const t = reconA.totals;
      assert.deepEqual({ uncached: t.uncached, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite, output: t.output }, provider);
      const w = wireA.totals;
      assert.deepEqual({ uncached: w.uncached, cacheRead: w.cacheRead, cacheWrite: w.cacheWrite, output: w.output }, provider);
    });
  });
}
