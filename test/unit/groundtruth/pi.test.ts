/**
 * Ground truth: the break points found from the Pi transcript alone (reconstructed mode) agree with
 * the first divergence of the request bodies Pi really sent (wire mode), for every agent request.
 * Runs on the committed recordings and, when PREFIX_LENS_FRESH_PI names a fresh recording (CI
 * records one per run), on that too — so a new Pi version or a reader bug shows up.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type RequestAnalysis } from '../../../src/core/analyze.js';
import { firstDiff } from '../../../src/core/diverge.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';

/** Scenario folders: committed fixtures plus an optional fresh recording. */
function scenarios(): Array<{ name: string; dir: string }> {
  const roots = [['committed', 'test/fixtures/pi']];
  if (process.env.PREFIX_LENS_FRESH_PI) roots.push(['fresh', process.env.PREFIX_LENS_FRESH_PI]);
  const out: Array<{ name: string; dir: string }> = [];
  for (const [label, root] of roots) {
    for (const s of ['main', 'long']) if (existsSync(join(root, s, 'requests'))) out.push({ name: `${label} ${s}`, dir: join(root, s) });
  }
  return out;
}

function sessionFile(dir: string): string {
  const base = join(dir, 'agent', 'sessions');
  const sub = readdirSync(base)[0];
  return join(base, sub, readdirSync(join(base, sub)).find((f) => f.endsWith('.jsonl'))!);
}

const PREFIX = new Set(['tools', 'system', 'messages', 'head']);
const prefixBreak = (r: RequestAnalysis) => (r.break && PREFIX.has(r.break.segment) ? r.break : null);

for (const sc of scenarios()) {
  describe(`Pi ground truth (${sc.name})`, () => {
    let recon: RequestAnalysis[];
    let wire: RequestAnalysis[];
    let bodies: string[];
    before(async () => {
      const file = sessionFile(sc.dir);
      recon = analyzeSession(await readPiSession(file)).requests;
      wire = analyzeSession(await readPiSession(file, { requestsDir: join(sc.dir, 'requests') })).requests;
      bodies = readdirSync(join(sc.dir, 'requests')).filter((f) => f.endsWith('.body.json')).sort();
    });

    it('has one wire request per captured body and one reconstructed request per assistant entry', () => {
      assert.equal(wire.length, bodies.length);
      const agentLines = wire.filter((r) => r.request.kind === 'agent').map((r) => r.request.source.line);
      assert.deepEqual(recon.map((r) => r.request.source.line), agentLines);
    });

    it('finds, for every agent request, the same break segment and message index as the real bodies', () => {
      for (const w of wire.filter((r) => r.request.kind === 'agent')) {
        const r = recon.find((x) => x.request.source.line === w.request.source.line)!;
        const wb = prefixBreak(w);
        const rb = prefixBreak(r);
        const where = `line ${w.request.source.line} (wire #${w.request.index})`;
        if (!wb) {
          assert.equal(rb, null, `${where}: reconstructed reports a break the bodies do not have`);
          continue;
        }
        assert.ok(rb, `${where}: the bodies break at ${wb.segment}[${wb.blockIndex}] but reconstructed mode sees none`);
        if (wb.segment === 'messages') {
          assert.equal(rb.segment, 'messages', where);
          assert.equal(rb.blockIndex, wb.blockIndex, where);
        } else {
          // tools or system changed: the transcript only knows the head as one opaque block.
          assert.equal(rb.segment, 'head', where);
        }
      }
    });

    it('names a params change (thinking) for exactly the agent requests whose bodies changed it', () => {
      const params = (r: RequestAnalysis) => r.causes.some((c) => c.kind === 'params-changed');
      const agents = wire.filter((r) => r.request.kind === 'agent');
      for (const w of agents) {
        const r = recon.find((x) => x.request.source.line === w.request.source.line)!;
        assert.equal(params(r), params(w), `line ${w.request.source.line} (wire #${w.request.index})`);
      }
      if (sc.name.endsWith('main')) assert.deepEqual(agents.filter(params).map((r) => r.request.source.line), [28]);
    });

    it('reports wire breaks at the exact byte offset of the first changed byte of the body', () => {
      let checked = 0;
      for (const w of wire) {
        const b = prefixBreak(w);
        if (!b) continue;
        const body = readFileSync(join(sc.dir, 'requests', bodies[w.request.index - 1]));
        const old = readFileSync(join(sc.dir, 'requests', bodies[w.matched! - 1]));
        const after = Buffer.from(b.after);
        const at = body.indexOf(after, Math.max(0, b.byteOffset - after.length));
        assert.ok(at >= 0 && at <= b.byteOffset && b.byteOffset < at + after.length, `#${w.request.index}: offset ${b.byteOffset} outside the excerpt`);
        // The byte at the offset is the first one that differs from what the cached entry had at
        // the same place in its block (both excerpts start at the same place in the block).
        const oldBlockStart = old.indexOf(Buffer.from(b.before).subarray(0, Math.min(16, b.before.length)));
        assert.ok(oldBlockStart >= 0, `#${w.request.index}: before-excerpt not found in the matched body`);
        assert.equal(firstDiff(Buffer.from(b.before), after), b.byteOffset - at, `#${w.request.index}: the excerpts do not first differ at the offset`);
        checked++;
      }
      assert.ok(checked > 0, 'the recording has at least one wire break to check');
    });

    it('recognizes summary requests (compaction, branch summary) as such', () => {
      for (const w of wire) {
        const body = JSON.parse(readFileSync(join(sc.dir, 'requests', bodies[w.request.index - 1]), 'utf8'));
        // Pi's summarization calls: their own system prompt, no tools (reference/pi.md §2).
        const system = JSON.stringify(body.system ?? body.messages?.[0] ?? body.input?.[0] ?? '');
        const isSummary = !('tools' in body) && system.includes('context summarization assistant');
        assert.equal(w.request.kind === 'summary', isSummary, `#${w.request.index}`);
      }
    });
  });
}
