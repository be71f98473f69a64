/**
 * The live tail of a Codex 0.169 fork (`analyze --watch`; test/fixtures/codex-agents) follows its
 * parent rollout as the watch goes on, not as discovery found it at the start: whenever the fork
 * is read again the parent is looked for again unless it is still where it was (one listing of
 * the Codex home then, none while it is), and the parent itself growing, moving or going away is a
 * change of the fork (one stat per update, no listing). Listings are counted as in
 * codex-fork-parent-lookup.test.ts: each listing of a Codex home reads its `archived_sessions/`.
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { spyOnReaddir } from '../../readdirSpy.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetText } from '../../../src/cli/watch.js';
import { discoverSessions } from '../../../src/hosts/registry.js';
import { LiveAnalysis, type LiveUpdate } from '../../../src/live/session.js';

const DAY = 'sessions/2026/12/01';
const FORK = 'rollout-2026-12-01T13-21-34-01a231c4-8c57-7e42-bdd1-a6aa99bf54c4.jsonl';
const PARENT_ID = '01a231c4-7b9f-70b3-9be5-8568513de12f';
const PARENT = `rollout-2026-12-01T13-21-30-${PARENT_ID}.jsonl`;
const NOT_FOUND = `fork of ${PARENT_ID}: its parent rollout (the history it goes on from) was not found beside it; the fork's requests hold only its own items`;
/** Per request: verdict and messages blocks (the recorded fork: 12 parent items + its own 2 at #1). */
const WITH_PARENT = ['cold 14', 'break 16'];
const WITHOUT_PARENT = ['cold 1', 'break 3'];
/** A line Codex writes that makes no request (an agent message event). */
const EVENT = '{"timestamp":"2026-12-01T13:30:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"later"}}\n';

describe('live tail of a Codex fork: its parent rollout is looked for again when the fork is read again', () => {
  let dir: string;
  let home: string;
  let listings = 0;
  spyOnReaddir((p) => {
    if (p === join(home ?? '', 'archived_sessions')) listings++;
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-live-fork-'));
    home = join(dir, 'codex');
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    listings = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The report's diagnostics, then per request its verdict and messages blocks. */
  const seen = (live: LiveAnalysis) => {
    const r = live.report;
    return [...r.diagnostics.map((d) => `${d.severity} line ${d.line}: ${d.message}`), ...r.requests.map((q) => `${q.verdict} ${q.segmentTable.find((t) => t.segment === 'messages')!.blocks}`)];
  };
  const step = (u: LiveUpdate) => `${u.change}${u.cause ? ` ${u.cause.kind}` : ''}`;

  it('a parent that appears after the watch started is read once the fork changes; archived, grown: read again; unchanged: no listing', async () => {
    const parent = join(home, DAY, PARENT);
    const fork = join(home, DAY, FORK);
    renameSync(parent, join(dir, PARENT));
    const ref = (await discoverSessions({ env: { CODEX_HOME: home }, home: dir })).find((r) => r.path === fork)!;
    assert.equal(ref.basePath, null);
    const live = await LiveAnalysis.open(ref);
    assert.deepEqual(seen(live), [`warning line 1: ${NOT_FOUND}`, ...WITHOUT_PARENT]);
    listings = 0;

    // The parent is back; the fork unchanged: nothing to read (no listing per update).
    renameSync(join(dir, PARENT), parent);
    assert.equal(step(await live.update()), 'unchanged');
    assert.equal(listings, 0);
    // The fork grows: read again, its parent looked for (one listing) and read.
    appendFileSync(fork, EVENT);
    assert.equal(step(await live.update()), 'reset grew');
    assert.equal(listings, 1);
    assert.deepEqual(seen(live), WITH_PARENT);
    assert.equal(live.ref.basePath, parent);
    assert.equal(ref.basePath, null, "the caller's ref is left as listed");
    // Nothing changed: one stat of the parent, no listing.
    assert.equal(step(await live.update()), 'unchanged');
    assert.equal(listings, 1);

    // Archived (the fork unchanged): the parent's path is gone, so the fork is read again with the parent found where it went.
    mkdirSync(join(home, 'archived_sessions'));
    const archived = join(home, 'archived_sessions', PARENT);
    renameSync(parent, archived);
    const u = await live.update();
    assert.equal(step(u), 'reset parent');
    assert.equal(resetText(u.cause), 'the parent rollout it was forked from changed; read again');
    assert.equal(listings, 2);
    assert.equal(live.ref.basePath, archived);
    assert.deepEqual(seen(live), WITH_PARENT);
    // The parent grows where it is: read again, no listing.
    appendFileSync(archived, EVENT);
    assert.equal(step(await live.update()), 'reset parent');
    assert.equal(listings, 2);
    assert.deepEqual(seen(live), WITH_PARENT);
    assert.equal(step(await live.update()), 'unchanged');
    // Removed: read again without it, said so.
    rmSync(archived);
    assert.equal(step(await live.update()), 'reset parent');
    assert.equal(listings, 3);
    assert.equal(live.ref.basePath, null);
    assert.deepEqual(seen(live), [`warning line 1: ${NOT_FOUND}`, ...WITHOUT_PARENT]);
    assert.equal(step(await live.update()), 'unchanged');
    assert.equal(listings, 3);
    assert.ok(statSync(fork).size > 0);
  });
});
