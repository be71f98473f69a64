import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Session } from '../../../src/core/model.js';
import type { ContextStreamMessage } from '../../../src/phux/stream.js';
import { carrier, carriers, type CarrierCandidate } from '../../../src/report/phux.js';

/** The straightforward rule carriers implements with one scan: the first agent request after the message. */
function scanned(m: Pick<ContextStreamMessage, 'line' | 'timeMs'>, path: string, requests: readonly CarrierCandidate[]): number | null {
  const agents = requests.filter((r) => r.kind === 'agent');
  if (agents.length && agents.every((r) => r.source.file === path && r.source.line > 0)) return agents.find((r) => r.source.line > m.line)?.index ?? null;
  if (m.timeMs === null) return null;
  return agents.find((r) => r.timeMs !== null && r.timeMs >= m.timeMs!)?.index ?? null;
}

const PATH = '/s.jsonl';
const session = (requests: CarrierCandidate[]) => ({ path: PATH, requests }) as unknown as Session;
const message = (line: number, timeMs: number | null) => ({ line, timeMs }) as ContextStreamMessage;

describe('phux carrier (first agent request after a context message)', () => {
  it('by line and by time, including unordered lines, null times, other files and summary requests', () => {
    const reqs: CarrierCandidate[] = [
      { index: 1, kind: 'title', source: { file: PATH, line: 2 }, timeMs: 10 },
      { index: 2, kind: 'agent', source: { file: PATH, line: 5 }, timeMs: 20 },
      { index: 3, kind: 'agent', source: { file: PATH, line: 4 }, timeMs: null },
      { index: 4, kind: 'agent', source: { file: PATH, line: 9 }, timeMs: 40 },
    ];
    const of = carriers(session(reqs));
    assert.deepEqual([0, 3, 4, 5, 8, 9].map((l) => of(message(l, null))), [2, 2, 2, 4, 4, null]);
    // One request read from another file: every message is placed by time.
    const mixed = [...reqs, { index: 5, kind: 'agent', source: { file: '/other.db', line: 0 }, timeMs: 30 } as CarrierCandidate];
    const byTime = carriers(session(mixed));
    assert.deepEqual([5, 20, 21, 30, 31, 40, 41].map((t) => byTime(message(1, t))), [2, 2, 4, 4, 4, 4, null]);
    assert.equal(byTime(message(1, null)), null);
    assert.equal(carriers(session([]))(message(1, 5)), null);
  });

  it('equals the scan of every request on generated sessions', () => {
    const candidate = fc.record({
      kind: fc.constantFrom('agent', 'agent', 'agent', 'title', 'summary'),
      line: fc.integer({ min: 0, max: 60 }),
      timeMs: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
      other: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 25 }), fc.boolean(), fc.array(fc.record({ line: fc.integer({ min: -1, max: 61 }), timeMs: fc.option(fc.integer({ min: -1, max: 61 }), { nil: null }) }), { maxLength: 10 }), (cs, sameFile, ms) => {
        const reqs = cs.map((c, i): CarrierCandidate => ({ index: i + 1, kind: c.kind as CarrierCandidate['kind'], source: { file: sameFile || !c.other ? PATH : '/x', line: c.line }, timeMs: c.timeMs }));
        const of = carriers(session(reqs));
        for (const m of ms) {
          const want = scanned(m, PATH, reqs);
          assert.equal(of(message(m.line, m.timeMs)), want);
          assert.equal(carrier(message(m.line, m.timeMs), session(reqs)), want);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
