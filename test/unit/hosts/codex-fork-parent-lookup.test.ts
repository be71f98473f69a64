/**
 * A Codex 0.169 fork's parent rollout (session_meta.history_base, test/fixtures/codex-agents) is
 * found once per discovery, not once per fork and per look: discovery resolves it
 * (SessionRef.basePath) from the listing it made (or, for a walk or a named file, one listing of
 * the Codex home for all forks: codex/locate.ts RolloutLookup), and the reader and the cache
 * stamp (codexBaseStamp) take the ref's path. Listings are counted at the fs call: each listing of
 * a Codex home (locateCodexRollouts) reads its `archived_sessions/` folder once, which the
 * recording does not have, so nothing else reads it.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import fsp = require('node:fs/promises');
import { spyOnReaddir } from '../../readdirSpy.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityOf } from '../../../src/cache/results.js';
import { analyzeRefUncached } from '../../../src/cache/results.js';
import { main } from '../../../src/cli/main.js';
import { warmJson } from '../../../src/cli/warm.js';
import { defaultRules } from '../../../src/core/rules.js';
import { resolveForkParents, RolloutLookup } from '../../../src/hosts/codex/locate.js';
import { discoverSessions, findSessions, hostOf, openRef, type SessionRef } from '../../../src/hosts/registry.js';

const DAY = 'sessions/2026/12/01';
const FORK_ID = '01a231c4-8c57-7e42-bdd1-a6aa99bf54c4';
const FORK = `rollout-2026-12-01T13-21-34-${FORK_ID}.jsonl`;
const PARENT_ID = '01a231c4-7b9f-70b3-9be5-8568513de12f';
const PARENT = `rollout-2026-12-01T13-21-30-${PARENT_ID}.jsonl`;
const NOT_FOUND = `fork of ${PARENT_ID}: its parent rollout (the history it goes on from) was not found beside it; the fork's requests hold only its own items`;
/** Forks in the home: the recorded one and this many copies under other conversation ids. */
const COPIES = 4;

/** Per request: verdict and messages blocks (the recorded fork: 12 parent items + its own 2 at #1). */
const WITH_PARENT = ['cold 14', 'break 16'];
const WITHOUT_PARENT = ['cold 1', 'break 3'];

describe('Codex fork: the parent rollout is looked for once per discovery', () => {
  let dir: string;
  let home: string;
  let parent: string;
  let forks: string[];
  let listings = 0;
  const saved: Record<string, string | undefined> = {};
  const ENV = ['XDG_CACHE_HOME', 'CODEX_HOME'] as const;
  spyOnReaddir((p) => {
    if (p === join(home ?? '', 'archived_sessions')) listings++;
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-codex-parent-'));
    for (const k of ENV) saved[k] = process.env[k];
    home = join(dir, 'codex');
    process.env.XDG_CACHE_HOME = join(dir, 'xdg');
    process.env.CODEX_HOME = home;
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    parent = join(home, DAY, PARENT);
    forks = [join(home, DAY, FORK)];
    // More forks of the same parent: the recording with another conversation id (same length).
    const text = readFileSync(forks[0], 'utf8');
    for (let i = 0; i < COPIES; i++) {
      const id = `${FORK_ID.slice(0, -1)}${i}`;
      const f = join(home, DAY, FORK.replace(FORK_ID, id));
      writeFileSync(f, text.split(FORK_ID).join(id));
      forks.push(f);
    }
    listings = 0;
  });
  afterEach(() => {
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const discover = async () => (await discoverSessions({ env: { CODEX_HOME: home }, home: dir })).filter((r) => r.host === 'codex');
  const forkRefs = (refs: SessionRef[]) => refs.filter((r) => r.baseThread !== undefined).sort((a, b) => (a.path < b.path ? -1 : 1));
  /** Per analyzed fork: its diagnostics, then per request its verdict and messages blocks. */
  const analyzed = async (ref: SessionRef) => {
    const [s] = await analyzeRefUncached(ref);
    return [...s.diagnostics.map((d) => `${d.severity} line ${d.line}: ${d.message}`), ...s.requests.map((r) => `${r.verdict} ${r.segmentTable.find((t) => t.segment === 'messages')!.blocks}`)];
  };

  it('discovery of the Codex home lists it once for 5 forks; reading and stamping them lists it no more', async () => {
    const refs = await discover();
    assert.equal(listings, 1, "discovery's own listing");
    assert.equal(refs.length, 3 + COPIES);
    const fr = forkRefs(refs);
    assert.deepEqual(fr.map((r) => r.path), [...forks].sort());
    for (const r of fr) assert.equal(r.basePath, parent);
    // The parent and the sub-agent are no forks.
    assert.deepEqual(refs.filter((r) => r.baseThread === undefined).map((r) => r.basePath), [undefined, undefined]);
    for (const r of fr) {
      assert.deepEqual(await analyzed(r), WITH_PARENT);
      const id = await identityOf(r, defaultRules);
      const st = await fsp.stat(parent);
      assert.equal(id!.base, `${parent}:${st.size}:${st.mtimeMs}`);
    }
    assert.equal(listings, 1, 'the reader and the cache identity took the ref\'s path (before: 2 more per fork)');
  });

  it('a missing parent: one listing, basePath null, the same warning and requests as before, stamp absent', async () => {
    renameSync(parent, join(dir, PARENT));
    const fr = forkRefs(await discover());
    assert.equal(fr.length, 1 + COPIES);
    for (const r of fr) {
      assert.equal(r.basePath, null);
      assert.deepEqual(await analyzed(r), [`warning line 1: ${NOT_FOUND}`, ...WITHOUT_PARENT]);
      assert.equal((await identityOf(r, defaultRules))!.base, 'absent');
    }
    assert.equal(listings, 1);
  });

  it('a walk of the home (analyze <folder>) does not list it again for the parent search (the walk\'s listing is taken); a cold `analyze --json` of it neither', async () => {
    const fr = forkRefs(await findSessions(home));
    assert.equal(listings, 0, 'the walk listed the home: no archived_sessions/ in it, not looked into (before: 1, see codex-walk-listing.test.ts)');
    for (const r of fr) assert.equal(r.basePath, parent);

    listings = 0;
    const out: string[] = [];
    assert.equal(await main(['analyze', '--json', home], (s) => out.push(s), () => {}, process.cwd()), 0);
    const doc = JSON.parse(out.join('\n')) as { sessions: Array<{ path: string; requests: Array<{ verdict: string; segmentTable: Array<{ segment: string; blocks: number }> }> }> };
    const forkSessions = doc.sessions.filter((s) => forks.includes(s.path));
    assert.equal(forkSessions.length, 1 + COPIES);
    for (const s of forkSessions) assert.deepEqual(s.requests.map((r) => `${r.verdict} ${r.segmentTable.find((t) => t.segment === 'messages')!.blocks}`), WITH_PARENT);
    assert.equal(listings, 0, 'before d21b3d4: 6 per fork (30); before the walk\'s listing was shared: 1');
  });

  it('one named fork (analyze --json <fork>): one listing in the full run (was 6) and one in the warm entry; a parent back after a parentless run is seen', async () => {
    const full = async () => {
      const out: string[] = [];
      assert.equal(await main(['analyze', '--json', forks[0]], (s) => out.push(s), () => {}, process.cwd()), 0);
      return `${out.join('\n')}\n`;
    };
    const warm = async () => {
      const parts: Buffer[] = [];
      const code = await warmJson(['analyze', '--json', forks[0]], {
        cwd: process.cwd(),
        env: process.env,
        cacheDir: join(dir, 'xdg/prefix-lens'),
        sink: { line: (t) => void parts.push(Buffer.from(`${t}\n`)), bytes: (b) => void parts.push(Buffer.from(b)) },
      });
      return code === null ? null : Buffer.concat(parts).toString('utf8');
    };
    const first = await full();
    assert.equal(listings, 1);
    listings = 0;
    assert.equal(await warm(), first);
    assert.equal(listings, 1, 'the warm entry looks for the parent again (the manifest\'s basePath is the last run\'s)');

    renameSync(parent, join(dir, PARENT));
    listings = 0;
    const without = await full();
    assert.equal(listings, 1);
    assert.match(without, /was not found beside it/);
    assert.equal(await warm(), without);
    // A parent that appears outside the named path: the manifest's basePath (null) is not trusted.
    renameSync(join(dir, PARENT), parent);
    assert.equal(await warm(), null);
    assert.equal(await full(), first);
  });

  it('refs made outside discovery: resolved through one RolloutLookup for all; a parent moved after discovery is looked for again', async () => {
    const codex = hostOf('codex');
    const bare = (await Promise.all(forks.map((f) => codex.refsAt(f, false, 'named')))).map((r) => r![0]);
    assert.ok(bare.every((r) => r.baseThread === PARENT_ID && r.basePath === undefined));
    await resolveForkParents(bare, new RolloutLookup());
    assert.equal(listings, 1);
    assert.ok(bare.every((r) => r.basePath === parent));

    // Archived after the listing: the ref's path is gone, the reader and the stamp find it again.
    const archived = join(home, 'archived_sessions', PARENT);
    await fsp.mkdir(join(home, 'archived_sessions'));
    renameSync(parent, archived);
    listings = 0;
    assert.deepEqual(await analyzed(bare[0]), WITH_PARENT);
    const st = await fsp.stat(archived);
    assert.equal((await identityOf(bare[0], defaultRules))!.base, `${archived}:${st.size}:${st.mtimeMs}`);
    assert.deepEqual((await openRef(bare[0]))[0].diagnostics, []);
    assert.equal(listings, 3, 'one search per look at a stale ref (reader, identity, reader)');
  });
});
