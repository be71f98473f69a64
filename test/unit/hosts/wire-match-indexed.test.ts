/**
 * The wire matcher's indexes (wirematch.ts matchRequests: response id → bodies, model → prefix hash
 * → bodies, each body hashed once) pair exactly the requests and bodies a scan of every body per
 * request pairs (the matcher before the indexes, kept here as the reference): on the Claude Code
 * and Codex recordings, with and without the metas' response ids, and on generated inputs.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { chainOf } from '../../../src/core/chain.js';
import type { Block, LlmRequest } from '../../../src/core/model.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { matchRequests, readBodies, type CapturedRequest } from '../../../src/hosts/wirematch.js';

/** The matcher as it was: for each request, every body scanned, each candidate chained and hashed again. */
function scanned(requests: LlmRequest[], bodies: CapturedRequest[]): Map<LlmRequest, CapturedRequest> {
  const bodyOf = new Map<LlmRequest, CapturedRequest>();
  const taken = new Set<CapturedRequest>();
  for (const r of requests) {
    const b = r.responseId ? bodies.find((x) => !taken.has(x) && x.responseId === r.responseId) : undefined;
    if (b) {
      bodyOf.set(r, b);
      taken.add(b);
    }
  }
  const sameChain = (b: CapturedRequest, r: LlmRequest) => {
    const t = chainOf(b.wire!.blocks);
    return t !== null && r.tail !== null && t.sameHash(r.tail);
  };
  for (const r of requests) {
    if (bodyOf.has(r) || !r.tail) continue;
    const b = bodies.find((x) => !taken.has(x) && x.wire && x.wire.model === r.model && sameChain(x, r));
    if (b) {
      bodyOf.set(r, b);
      taken.add(b);
    }
  }
  return bodyOf;
}

/** The pairs as [request position, body position], in request order. */
const pairs = (requests: LlmRequest[], bodies: CapturedRequest[], m: Map<LlmRequest, CapturedRequest>) =>
  requests.flatMap((r, i) => (m.has(r) ? [[i, bodies.indexOf(m.get(r)!)]] : []));

const transcripts = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.jsonl')).map((e) => join(e.parentPath, e.name)).sort();

describe('wire match: indexed = scanned', () => {
  const cases = [
    // Pairs found with the ids and without: Claude Code's reconstruction hashes as its bodies do
    // (every pair is found by hash alone); Codex's does not (its pairs come from the ids).
    { dir: 'test/fixtures/claude-code', read: readClaudeSession, counts: [13, 13] },
    { dir: 'test/fixtures/claude-code-autocompact', read: readClaudeSession, counts: [4, 4] },
    { dir: 'test/fixtures/codex', read: readCodexSession, counts: [9, 0] },
    { dir: 'test/fixtures/codex-agents', read: readCodexSession, counts: [7, 0] },
  ];
  for (const c of cases) {
    it(`${basename(c.dir)}: the same pairs, with the metas' response ids and without them (prefix hashes only)`, async () => {
      // Claude Code: the main transcript (its sub-agents come with it); Codex: every rollout, each matched alone (as withWire is called).
      const files = transcripts(join(c.dir, c.read === readClaudeSession ? 'claude' : 'codex')).filter((f) => !f.includes('/subagents/'));
      const counts: number[] = [];
      for (const strip of [false, true]) {
        let n = 0;
        for (const f of files) {
          const requests = (await c.read(f)).flatMap((s) => s.requests);
          const bodies = await readBodies(join(c.dir, 'requests'), []);
          if (strip) for (const b of bodies) delete b.responseId;
          const want = pairs(requests, bodies, scanned(requests, bodies));
          assert.deepEqual(pairs(requests, bodies, matchRequests(requests, bodies)), want, f);
          n += want.length;
        }
        counts.push(n);
      }
      assert.deepEqual(counts, c.counts);
    });
  }
});

describe('wire match: indexed = scanned on generated inputs', () => {
  // Few models, ids and block texts, so that ids repeat, hashes collide on purpose (equal chains)
  // and bodies are left over (a retry's same bytes, a body no request has).
  const text = fc.constantFrom('{"a":1}', '{"b":2}', '{"c":3}');
  const blocks = fc.array(text, { maxLength: 3 });
  const model = fc.constantFrom('m1', 'm2');
  const id = fc.option(fc.constantFrom('r1', 'r2', 'r3', 'r4'), { nil: undefined });
  const block = (t: string, i: number): Block => ({ segment: i === 0 ? 'system' : 'messages', item: i, path: `x[${i}]`, bytes: new TextEncoder().encode(t) });
  const body = fc.record({ model, id, blocks: fc.option(blocks, { nil: undefined }) });
  const request = fc.record({ model, id, blocks: fc.option(blocks, { nil: undefined }) });
  it('the same pairs for any requests and bodies', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 12 }), fc.array(body, { maxLength: 12 }), (rs, bs) => {
        const requests = rs.map((r, i) => ({ index: i + 1, model: r.model, responseId: r.id, tail: r.blocks ? chainOf(r.blocks.map(block)) : null }) as unknown as LlmRequest);
        const bodies: CapturedRequest[] = bs.map((b, i) => ({
          file: `${i}.body.json`,
          n: i + 1,
          ...(b.id ? { responseId: b.id } : {}),
          ...(b.blocks ? { wire: { api: 'anthropic-messages', model: b.model, blocks: b.blocks.map(block) } as unknown as CapturedRequest['wire'] } : {}),
        }));
        assert.deepEqual(pairs(requests, bodies, matchRequests(requests, bodies)), pairs(requests, bodies, scanned(requests, bodies)));
      }),
      { numRuns: 2000 },
    );
  });
});
