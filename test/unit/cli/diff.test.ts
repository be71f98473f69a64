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
    assert.deepEqual(r.out.slice(0, 4), ['pi lab session: #8 ↔ #9 (break: messages · messages[0].content[0].text @56)', '--- request #8', '+++ request #9', '@@ -1,78 +1,80 @@']);
    assert.ok(r.out.includes('-──── block 2: messages · messages[0] · 70 bytes at prefix byte 7 · prefix 1be02909f63b · role user'));
    assert.ok(r.out.includes('+──── block 2: messages · messages[0] · 659 bytes at prefix byte 7 · prefix e60fe40a9a28 · role user · from compaction-summary'));
    // The opaque head before it is the same on both sides: context, not a change.
    assert.ok(r.out.includes(' pi:head'));
    assert.ok(r.out.includes(' params: thinking=high'));
  });

  it('a request that only extends the other: "no break", the added blocks as additions; M named explicitly', async () => {
    const r = await run(['diff', PI_MAIN, '2', '1', '--context', '0']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0], 'pi lab session: #1 ↔ #2 (no break: #2 extends #1)');
    assert.deepEqual(r.out.filter((l) => l.startsWith('+──── ')).map((l) => l.replace(/ · prefix [0-9a-f]{12}.*$/, '')), [
      '+──── block 3: messages · messages[2] · 62 bytes at prefix byte 77',
      '+──── block 4: messages · messages[3] · 100 bytes at prefix byte 139',
    ]);
  });

  it('exit 1 for a request the session does not have, 2 for usage errors and for a folder of several sessions', async () => {
    const missing = await run(['diff', PI_MAIN, '99']);
    assert.deepEqual([missing.code, missing.err], [1, 'prefix-lens diff: pi lab session has 13 request(s); no request #99']);
    const first = await run(['diff', PI_MAIN, '1']);
    assert.deepEqual([first.code, first.err], [1, 'prefix-lens diff: pi lab session has 13 request(s); request #1 has no earlier request to compare with']);
    for (const args of [['diff'], ['diff', PI_MAIN], ['diff', PI_MAIN, '0'], ['diff', PI_MAIN, 'x'], ['diff', PI_MAIN, '3', '2', '1'], ['diff', PI_MAIN, '3', '--context', '-1']]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.err, /usage: prefix-lens diff <path> <N>/);
    }
    const folder = await run(['diff', 'test/fixtures/pi', '3']);
    assert.equal(folder.code, 2);
    assert.match(folder.err, /^prefix-lens diff: 2 sessions at test\/fixtures\/pi; name one/);
  });
});
