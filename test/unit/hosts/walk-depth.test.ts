/**
 * How deep a folder walk goes (WALK_MAX_DEPTH) and that it says what it left out: a session 16
 * folder levels below the path is read; one 17 levels below is not, and the folder not entered is
 * named in a warning (the CLI prints it on stderr) instead of "no sessions found" alone.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WALK_DEEP_NAMED, WALK_MAX_DEPTH } from '../../../src/hosts/files.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { runCli } from '../hostile/harness.js';

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl';

describe('folder walk depth', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-walk-depth-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A copy of the Pi session `levels` folders below `root`; returns its folder. */
  function deep(root: string, levels: number): string {
    const d = join(root, ...Array.from({ length: levels }, () => 'x'));
    mkdirSync(d, { recursive: true });
    copyFileSync(PI, join(d, 's.jsonl'));
    return d;
  }

  it(`reads a session ${WALK_MAX_DEPTH} levels below (room for <backup>/<date>/<host>/home/<user>/.codex/sessions/YYYY/MM/DD), without a warning`, async () => {
    assert.equal(WALK_MAX_DEPTH, 16);
    const d = deep(dir, 16);
    const warnings: string[] = [];
    const refs = await findSessions(dir, undefined, (w) => warnings.push(w));
    assert.deepEqual(refs.map((r) => [r.host, r.path]), [['pi', join(d, 's.jsonl')]]);
    assert.deepEqual(warnings, []);
  });

  it('names each folder not entered below the limit; past WALK_DEEP_NAMED, counts the rest', async () => {
    deep(join(dir, 'a'), 17);
    const warnings: string[] = [];
    assert.deepEqual(await findSessions(join(dir, 'a'), undefined, (w) => warnings.push(w)), []);
    assert.deepEqual(warnings, [`${join(dir, 'a', ...Array(16).fill('x'))}/x: folder not entered: more than 16 levels below ${join(dir, 'a')} (name it, or a folder nearer to it, to read the sessions in it)`]);
    const wide = join(dir, 'b', ...Array(16).fill('x'));
    for (let i = 0; i < WALK_DEEP_NAMED + 3; i++) mkdirSync(join(wide, `d${String(i).padStart(2, '0')}`), { recursive: true });
    warnings.length = 0;
    await findSessions(join(dir, 'b'), undefined, (w) => warnings.push(w));
    assert.equal(warnings.length, WALK_DEEP_NAMED + 1);
    assert.ok(warnings[0].startsWith(`${join(wide, 'd00')}: folder not entered`), warnings[0]);
    assert.equal(warnings[WALK_DEEP_NAMED], `${join(dir, 'b')}: 3 more folders more than 16 levels below it not entered`);
  });

  it('counts one folder past WALK_DEEP_NAMED as "1 more folder" (it said "1 more folder(s)")', async () => {
    const wide = join(dir, 'c', ...Array(16).fill('x'));
    for (let i = 0; i < WALK_DEEP_NAMED + 1; i++) mkdirSync(join(wide, `d${String(i).padStart(2, '0')}`), { recursive: true });
    const warnings: string[] = [];
    await findSessions(join(dir, 'c'), undefined, (w) => warnings.push(w));
    assert.equal(warnings.length, WALK_DEEP_NAMED + 1);
    assert.equal(warnings[WALK_DEEP_NAMED], `${join(dir, 'c')}: 1 more folder more than 16 levels below it not entered`);
  });

  it('the CLI says which folder it did not enter, on stderr, before "no sessions found" (exit 2)', async () => {
    deep(dir, 17);
    const run = await runCli(['analyze', '--no-cache', dir]);
    assert.equal(run.code, 2);
    assert.match(run.err, new RegExp(`^prefix-lens: warning: ${dir}(/x){17}: folder not entered: more than 16 levels below ${dir} `, 'm'));
    const json = await runCli(['analyze', '--no-cache', '--json', join(dir, 'x')]);
    assert.equal(json.code, 0);
    assert.equal(JSON.parse(json.out).sessions.length, 1);
    assert.equal(json.err, '');
  });
});
