/**
 * A folder walk (findSessions, a host's configured folders) lists each folder of a Codex home
 * once: the parent search for its forks (HostEntry.settle, codex/locate.ts RolloutLookup) takes
 * the walk's own listing of the home instead of listing it again (it did: every folder of
 * `sessions/` twice, and `archived_sessions/`, absent, once more). Counted at the fs call: each
 * `readdir(…, { withFileTypes: true })` of a folder is one listing of it (the walk's and the parent
 * search's; the hosts' peeks at a folder's names, `readdir(dir)`, are counted apart).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { spyOnReaddir } from '../../readdirSpy.js';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { findSessions, type SessionRef } from '../../../src/hosts/registry.js';

const DAY = 'sessions/2026/12/01';
const PARENT = 'rollout-2026-12-01T13-21-30-01a231c4-7b9f-70b3-9be5-8568513de12f.jsonl';

describe('folder walk: a Codex home is listed once, its forks resolved from that listing', () => {
  let dir: string;
  /** Listings with file types by folder (relative to `dir`), and peeks at names. */
  let typed: Map<string, number>;
  let peeks: Map<string, number>;
  spyOnReaddir((p, options) => {
    if (!dir || !p.startsWith(dir)) return;
    const m = options?.withFileTypes ? typed : peeks;
    const k = relative(dir, p) || '.';
    m.set(k, (m.get(k) ?? 0) + 1);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-codex-walk-'));
    typed = new Map();
    peeks = new Map();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const forks = (refs: SessionRef[]) => refs.filter((r) => r.baseThread !== undefined).map((r) => relative(dir, r.basePath ?? '-'));
  const sorted = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

  it('a walk of the home: every folder listed once (was twice), archived_sessions/ (absent) not at all; the fork has its parent', async () => {
    const home = join(dir, 'codex');
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    const refs = await findSessions(home);
    assert.equal(refs.length, 3);
    assert.deepEqual(forks(refs), [join('codex', DAY, PARENT)]);
    assert.deepEqual(sorted(typed), { codex: 1, 'codex/sessions': 1, 'codex/sessions/2026': 1, 'codex/sessions/2026/12': 1, 'codex/sessions/2026/12/01': 1 });
  });

  it('a walk of a folder holding two Codex homes (one with the parent archived): each home listed once', async () => {
    for (const h of ['a', 'b']) cpSync('test/fixtures/codex-agents/codex', join(dir, 'homes', h), { recursive: true });
    mkdirSync(join(dir, 'homes/b/archived_sessions'));
    renameSync(join(dir, 'homes/b', DAY, PARENT), join(dir, 'homes/b/archived_sessions', PARENT));
    const refs = await findSessions(join(dir, 'homes/'));
    assert.deepEqual(forks(refs), [join('homes/a', DAY, PARENT), join('homes/b/archived_sessions', PARENT)]);
    const once = (h: string) => [h, `${h}/sessions`, `${h}/sessions/2026`, `${h}/sessions/2026/12`, `${h}/sessions/2026/12/01`].map((k) => [k, 1] as const);
    assert.deepEqual(sorted(typed), Object.fromEntries([['homes', 1], ...once('homes/a'), ...once('homes/b'), ['homes/b/archived_sessions', 1]].sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))));
  });

  it('a walk of one day folder inside a home: the parent search lists the rest of the home, not that folder again', async () => {
    const home = join(dir, 'codex');
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    const refs = await findSessions(join(home, DAY));
    assert.deepEqual(forks(refs), [join('codex', DAY, PARENT)]);
    assert.deepEqual(sorted(typed), { 'codex/archived_sessions': 1, 'codex/sessions': 1, 'codex/sessions/2026': 1, 'codex/sessions/2026/12': 1, 'codex/sessions/2026/12/01': 1 });
  });
});
