import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.js';

const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => out.push(s), (s) => err.push(s), process.cwd());
  return { code, out, err: err.join('\n') };
}

describe('prefix-lens diff (a request beside the one it was compared with)', () => {
  it('the main Pi recording #9 against #8 (its match): the compaction summary replaces message 0 at prefix byte 56', async () => {
    const r = await run(['diff', PI_MAIN, '9']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.slice(0, 4), [
      'pi lab session: #8 ↔ #9 · verdict break (history-rewritten) · first difference in block 2 (messages · messages[0].content[0].text), byte 49 of the block, prefix byte 56',
      '--- request #8',
      '+++ request #9',
      '@@ -1,78 +1,80 @@',
    ]);
    // The first line (the session) is the same on both sides.
    assert.equal(r.out[4], ' pi lab session');
    assert.ok(r.out.includes('-──── block 2: messages · messages[0] · 70 bytes at prefix byte 7 · prefix 1be02909f63b · role user'));
    assert.ok(r.out.includes('+──── block 2: messages · messages[0] · 659 bytes at prefix byte 7 · prefix e60fe40a9a28 · role user · from compaction-summary'));
    // The opaque head before it is the same on both sides: context, not a change.
    assert.ok(r.out.includes(' pi:head'));
    assert.ok(r.out.includes(' params: thinking=high'));
  });

  it('a break the judge put in the opaque head (Pi long #4, system-changed): the line says the change is in the unrecorded head, the recorded prefix only extends', async () => {
    const r = await run(['diff', 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--/2026-12-01T09-25-41-787Z_01a230ec-991a-7497-9a50-b9f4f6517541.jsonl', '4']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0], "01a230ec-991a-7497-9a50-b9f4f6517541: #3 ↔ #4 · verdict break (system-changed) · #4's recorded prefix extends #3's: the change is in the head the transcript does not record (opaque, not shown)");
  });

  it('a request that only extends the other: "no break", the added blocks as additions; M named explicitly', async () => {
    const r = await run(['diff', PI_MAIN, '2', '1', '--context', '0']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0], "pi lab session: #1 ↔ #2 · verdict hit · #2's prefix extends #1's");
    assert.deepEqual(r.out.filter((l) => l.startsWith('+──── ')).map((l) => l.replace(/ · prefix [0-9a-f]{12}.*$/, '')), [
      '+──── block 3: messages · messages[2] · 62 bytes at prefix byte 77',
      '+──── block 4: messages · messages[3] · 100 bytes at prefix byte 139',
    ]);
  });

  it('exit 1 for a request the session does not have, 2 for usage errors and for a folder of several sessions', async () => {
    const missing = await run(['diff', PI_MAIN, '99']);
    assert.deepEqual([missing.code, missing.err], [1, 'prefix-lens diff: pi lab session has 13 requests: #1–#13; no request #99']);
    const first = await run(['diff', PI_MAIN, '1']);
    assert.deepEqual([first.code, first.err], [1, 'prefix-lens diff: pi lab session has 13 requests: #1–#13; request #1 has no earlier request to compare with']);
    for (const args of [['diff'], ['diff', PI_MAIN], ['diff', PI_MAIN, '0'], ['diff', PI_MAIN, 'x'], ['diff', PI_MAIN, '3', '2', '1'], ['diff', PI_MAIN, '3', '--context', '-1'], ['diff', PI_MAIN, '3', '3'], ['diff', PI_MAIN, '0x3'], ['diff', PI_MAIN, '1e1'], ['diff', PI_MAIN, ' 3'], ['diff', PI_MAIN, '3.0'], ['diff', PI_MAIN, '99999999999999999999'], ['diff', PI_MAIN, '3', '--context', '0x2']]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.err, /usage: prefix-lens diff <path \| --examples> <N>/);
    }
    // A file that holds no session says why, with file and line.
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-diff-'));
    try {
      writeFileSync(join(dir, 'events.jsonl'), '{"x":1}\n');
      const bad = await run(['diff', join(dir, 'events.jsonl'), '2']);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /^prefix-lens diff: .*events\.jsonl:1: first line is not a Pi session header/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const folder = await run(['diff', 'test/fixtures/pi', '3']);
    assert.deepEqual([folder.code, folder.err], [2, 'prefix-lens diff: 2 sessions at test/fixtures/pi; name one with --session <id prefix>: 01a230ec-991a-7497-9a50-b9f4f6517541, 01a230ec-9a4e-7417-8af1-68d34234bdc8']);
    const picked = await run(['diff', 'test/fixtures/pi', '3', '--session', '01a230ec-9a4e']);
    assert.equal(picked.out[0], "pi lab session: #2 ↔ #3 · verdict hit · #3's prefix extends #2's");
  });

  it('wire bodies (--requests): #9 against #8 breaks at the compaction summary, block 6 byte 49 (prefix byte 6,146): the numbers of the transcript, the summary requests between them aside', async () => {
    const r = await run(['diff', PI_MAIN, '9', '--requests', 'test/fixtures/pi/main/requests']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0], 'pi lab session: #8 ↔ #9 · verdict break (history-rewritten) · first difference in block 6 (messages · messages[0].content[0].text), byte 49 of the block, prefix byte 6,146');
    assert.deepEqual(r.out.slice(1, 3), ['--- request #8', '+++ request #9']);
  });

  it('--examples instead of the path: the bundled example --session names (with its recorded bodies); without --session the choice, with --requests a usage error', async () => {
    const r = await run(['diff', '--examples', '9', '--session', '01a230ec-9a4e']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0], 'pi lab session: #8 ↔ #9 · verdict break (history-rewritten) · first difference in block 6 (messages · messages[0].content[0].text), byte 49 of the block, prefix byte 6,146');
    const unnamed = await run(['diff', '--examples', '9']);
    assert.deepEqual([unnamed.code, unnamed.err], [2, EXAMPLES_CHOICE]);
    const bodies = await run(['diff', '--examples', '9', '--session', '01a230ec-9a4e', '--requests', 'test/fixtures/pi/main/requests']);
    assert.deepEqual([bodies.code, bodies.err.split('\n')[0]], [2, 'prefix-lens diff: --examples reads the bundled example sessions: it takes no --requests (they have their own request bodies)']);
  });

  it('side requests by their number (8.1 = the first summary request after #8): beside the one sent before, or a named one; only with the bodies', async () => {
    const wire = ['--requests', 'test/fixtures/pi/main/requests'];
    // The turn-prefix summary (body 010) beside the history summary (body 009) of the same compaction.
    const turn = await run(['diff', PI_MAIN, '8.2', ...wire]);
    assert.equal(turn.code, 0, turn.err);
    assert.deepEqual(turn.out.slice(0, 3), [
      'pi lab session: #8.1 ↔ #8.2 · first difference in block 2 (messages · messages[0].content[0].text), byte 73 of the block, prefix byte 417',
      '--- request #8.1',
      '+++ request #8.2',
    ]);
    // The branch summary (body 012) beside the history summary, named as M (`#` and leading zeros allowed).
    const branch = await run(['diff', PI_MAIN, '#9.1', '08.1', ...wire]);
    assert.equal(branch.out[0], 'pi lab session: #8.1 ↔ #9.1 · first difference in block 2 (messages · messages[0].content[0].text), byte 73 of the block, prefix byte 417');
    const beyond = await run(['diff', PI_MAIN, '16', ...wire]);
    assert.deepEqual([beyond.code, beyond.err], [1, 'prefix-lens diff: pi lab session has 16 requests: #1–#13, side requests #8.1, #8.2, #9.1; no request #16']);
    const noBodies = await run(['diff', PI_MAIN, '8.1']);
    assert.deepEqual([noBodies.code, noBodies.err], [1, 'prefix-lens diff: pi lab session has 13 requests: #1–#13; no request #8.1 (requests the transcript does not record, such as summary and title requests, need --requests DIR or --captures DIR)']);
    for (const bad of ['8.0', '8.', '.1', '8.1.1', '8,1', '8.1e0']) {
      const r = await run(['diff', PI_MAIN, bad, ...wire]);
      assert.equal(r.code, 2, bad);
      assert.match(r.err, /is not a request number/);
    }
  });

  it('a Claude Code session with a sub-agent: the path names the session itself; --session picks the sub-agent; the verdict beside a first difference after the entry', async () => {
    const cc = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';
    const main = await run(['diff', cc, '9']);
    assert.equal(main.out[0], '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6: #8 ↔ #9 · verdict break (history-rewritten, system-changed) · first difference in block 13 (system · system[0].text), byte 70 of the block, prefix byte 47,322');
    // #8 read #6's entry as expected: its prefix differs from #6's only after what was cached.
    const hit = await run(['diff', cc, '8', '6']);
    assert.equal(hit.out[0], '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6: #6 ↔ #8 · verdict hit (representation-only) · first difference in block 39 (messages · messages[10].content), byte 25 of the block, prefix byte 90,589');
    const sub = await run(['diff', cc, '2', '--session', 'aa44']);
    assert.deepEqual([sub.code, sub.err], [1, 'prefix-lens diff: general-purpose: Scripted sub-task has 1 request: #1; no request #2']);
    const none = await run(['diff', cc, '2', '--session', 'zz']);
    assert.equal(none.code, 2);
    assert.match(none.err, /has an id starting with "zz" \(8aa2b6b2-f6a6-44e7-865a-838c950a6fc6, aa4455826cc83258f\)$/);
  });
});

/** `diff --examples 9` without --session: every example session is one the examples name (the first 8 listed). */
const EXAMPLES_CHOICE = 'prefix-lens diff: 11 sessions in the bundled examples; name one with --session <id prefix>: 01a230ec-9a4e-7417-8af1-68d34234bdc8, 01a230ec-991a-7497-9a50-b9f4f6517541, ses_dcf12ad33ffeT01cYx7vI2BFm7, ses_dcf1247e0ffeCgywanUhom13B7, ses_dcf121370ffeVlzS73yoNupUUO, ses_dcf12063affe59b8qPYo2NJTOV, ses_dcf11ac77ffefsqoAY3L11jvVW, ses_dcf113f82ffe0AQvhG5Km2IW6u, … (11)';
