/**
 * PiEncoder with the branch points of a full read (normalize.ts `branchPoints`, `branches`): the
 * memo keeps only the states a later request can start from, and every request must get the
 * chain the full memo gives, built once (the same number of distinct nodes: no state computed
 * twice), on the Pi fixture sessions, the ground-truth-shaped fixtures with branches and
 * compactions, and generated sessions (branches back to older entries, compactions, model
 * switches between three APIs).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { BlockNode } from '../../../src/core/chain.js';
import type { LlmRequest } from '../../../src/core/model.js';
import { readPiFile, type PiEntryRec } from '../../../src/hosts/pi/read.js';
import { branchPoints, PiEncoder, reconstructRequests } from '../../../src/hosts/pi/normalize.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { writeSession } from '../../../scripts/bench/corpus.js';
import { cleanup, tempDir } from './helpers.js';

function distinctNodes(requests: LlmRequest[]): number {
  const seen = new Set<BlockNode>();
  for (const r of requests) for (let n = r.tail ?? null; n && !seen.has(n); n = n.prev) seen.add(n);
  return seen.size;
}

/** States the encoder holds in its memo, over every encoding context. */
function memoSize(e: PiEncoder): number {
  let n = 0;
  for (const m of (e as unknown as { states: Map<string, Map<unknown, unknown>> }).states.values()) n += m.size;
  return n;
}

/** Reconstructs `file` with the full memo and with the branch points; returns [requests, branch points, full memo, kept memo]. */
async function compare(file: string): Promise<[number, number, number, number]> {
  const read = await readPiFile(file);
  const fullEncoder = new PiEncoder();
  const full = reconstructRequests(read, fullEncoder);
  const branches = branchPoints(read.entries);
  const prunedEncoder = new PiEncoder({ branches });
  const pruned = reconstructRequests(read, prunedEncoder);
  assert.equal(pruned.requests.length, full.requests.length, file);
  pruned.requests.forEach((r, i) => {
    const f = full.requests[i];
    assert.equal(r.tail?.hashHex, f.tail?.hashHex, `${file} #${r.index}`);
    assert.equal(r.tail?.depth, f.tail?.depth, `${file} #${r.index}`);
    assert.equal(pruned.messageCounts.get(r), full.messageCounts.get(f), `${file} #${r.index}`);
  });
  assert.equal(distinctNodes(pruned.requests), distinctNodes(full.requests), `${file}: every state computed once`);
  return [full.requests.length, branches.size, memoSize(fullEncoder), memoSize(prunedEncoder)];
}

describe('Pi encoder memo kept at branch points only (full reads)', () => {
  it('branchPoints names exactly the entries with two or more children', () => {
    const rec = (order: number, parent: PiEntryRec | null): PiEntryRec =>
      ({ line: order + 2, order, id: `e${order}`, parentId: parent?.id ?? null, type: 'message', entry: null, parent, thinkingLevel: 'off', compaction: null }) as PiEntryRec;
    const e: PiEntryRec[] = [];
    e.push(rec(0, null));
    e.push(rec(1, e[0]));
    e.push(rec(2, e[1]));
    e.push(rec(3, e[1])); // 1's second child (its first is the entry right after it)
    e.push(rec(4, e[3]));
    e.push(rec(5, null)); // a second root
    e.push(rec(6, e[4])); // 4's only child, not right after it
    e.push(rec(7, e[5])); // 5's only child, not right after it
    e.push(rec(8, e[6]));
    e.push(rec(9, e[6])); // 6's second child, neither of them right after it
    assert.deepEqual([...branchPoints(e)].map((r) => r.id).sort(), ['e1', 'e6']);
    // Two children of an entry, both away from it (its next entry is not its child).
    const f: PiEntryRec[] = [rec(0, null)];
    f.push(rec(1, null));
    f.push(rec(2, f[0]));
    f.push(rec(3, f[0]));
    assert.deepEqual([...branchPoints(f)].map((r) => r.id), ['e0']);
    assert.deepEqual([...branchPoints([rec(0, null)])], []);
  });

  it('gives the Pi fixture sessions the same chains, built once', async () => {
    const refs = (await findSessions('test/fixtures/pi')).filter((r) => r.host === 'pi');
    const seen: Array<[number, number]> = [];
    for (const r of refs.sort((a, b) => a.path.localeCompare(b.path))) {
      const [requests, branches] = await compare(r.path);
      seen.push([requests, branches]);
    }
    // The long session and the main one (which has a branch back to an earlier entry).
    assert.deepEqual(seen, [[8, 0], [13, 1]]);
  });

  it('gives generated sessions with branches, compactions and three APIs the same chains, with a memo of their branch points', async function () {
    this.timeout(120_000);
    const dir = await tempDir('pi-memo-');
    try {
      const got: Array<[number, number, number, number]> = [];
      for (const seed of [1001, 1002, 1012]) {
        const file = join(dir, `s${seed}.jsonl`);
        await writeSession(file, { bytes: 1_200_000, seed, id: `memo-${seed}`, cwd: '/w', startMs: Date.UTC(2026, 0, 1) });
        got.push(await compare(file));
      }
      for (const [requests, branches, full, kept] of got) {
        assert.ok(branches > 0, `${branches} branch points`);
        // The full memo holds a state per entry and context; the kept one about one per branch point and context.
        assert.ok(kept * 20 < full, `${kept} of ${full} states kept (${requests} requests)`);
      }
      // [requests, branch points, states in the full memo, states kept] (the generator is seeded).
      assert.deepEqual(got, [
        [501, 2, 1149, 11],
        [404, 3, 1091, 12],
        [472, 3, 1366, 12],
      ]);
    } finally {
      await cleanup(dir);
    }
  });
});
