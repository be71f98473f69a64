import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { discoverSessions, type SessionRef } from '../../../src/hosts/registry.js';
import { listSqliteSessions, releaseOpenCodeStores } from '../../../src/hosts/opencode/discover.js';
import { piRef } from '../../../src/hosts/pi/discover.js';
import { SummaryCache, parseEntries, type SessionSummary } from '../../../src/extension/summaryCache.js';
import { sessionIds } from '../opencode/helpers.js';

/** A summary as the Sessions view keeps it (the figures of the main Pi recording). */
const summary = (requests: number): SessionSummary => ({
  title: 'pi lab session',
  requests,
  breaks: 3,
  misses: 0,
  hitRate: 0.6355811093755193,
  cacheRead: 19124,
  cacheWrite: 4994,
  uncached: 5971,
  lostTokens: 0,
  costUSD: 0,
  errors: 0,
  last: { index: requests, verdict: 'break', lostTokens: 0 },
});

describe('Sessions view summary cache (session-summaries.json)', () => {
  let dir: string;
  let sessions: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-summaries-'));
    sessions = join(dir, 'sessions');
    mkdirSync(sessions);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A session file of `text` and its ref as a listing gives it. */
  const session = (name: string, text: string): SessionRef => {
    const path = join(sessions, name);
    writeFileSync(path, text);
    const st = statSync(path);
    return { host: 'pi', key: path, path, id: name, title: null, firstPrompt: null, project: null, mtimeMs: st.mtimeMs, size: st.size, parentId: null };
  };
  const storage = () => join(dir, 'storage');
  const file = () => join(storage(), 'session-summaries.json');
  const saved = () => JSON.parse(readFileSync(file(), 'utf8')) as { format: number; entries: Record<string, { summary: SessionSummary }> };

  it('an entry is validated by content: the file rewritten with the same size and mtime is a miss', async () => {
    const ref = session('a.jsonl', `${'{"type":"session"}\n'.repeat(600)}`);
    const cache = new SummaryCache(storage());
    await cache.set(ref, summary(13));
    assert.deepEqual(await cache.get(ref), summary(13));
    // One byte in the head changed, size and mtime put back (a restored backup, a copy keeping mtime).
    writeFileSync(ref.path, `{"type":"sessioN"}\n${'{"type":"session"}\n'.repeat(599)}`);
    utimesSync(ref.path, new Date(ref.mtimeMs), new Date(ref.mtimeMs));
    assert.equal(statSync(ref.path).size, ref.size);
    assert.equal(await cache.get(ref), undefined);
    assert.deepEqual(cache.stats, { hits: 1, misses: 1, dropped: 0, lockTimeouts: 0 });
  });

  it('the content check is the CLI result cache\'s (first and last 64 KiB): a change 10 KB into the file or 10 KB before its end is a miss', async () => {
    const line = '{"type":"message","id":"0000"}\n';
    const text = line.repeat(10_000); // 310,000 bytes: head and tail windows do not overlap
    for (const at of [10_000, text.length - 10_000]) {
      const ref = session(`b${at}.jsonl`, text);
      const cache = new SummaryCache(storage());
      await cache.set(ref, summary(13));
      assert.deepEqual(await cache.get(ref), summary(13));
      const changed = Buffer.from(text);
      changed[at] = changed[at] === 0x30 ? 0x31 : 0x30;
      writeFileSync(ref.path, changed);
      utimesSync(ref.path, new Date(ref.mtimeMs), new Date(ref.mtimeMs));
      assert.equal(await cache.get(ref), undefined, `byte ${at}`);
      assert.deepEqual(cache.stats, { hits: 1, misses: 1, dropped: 0, lockTimeouts: 0 });
    }
  });

  it("a Codex fork's entry holds its parent rollout's stamp (the CLI identity's base): the parent grown, moved or removed is a miss", async () => {
    // The recorded fork (test/fixtures/codex-agents) reads its parent's first 40 lines.
    const home = join(dir, 'codex');
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    const day = join(home, 'sessions/2026/12/01');
    const parent = join(day, 'rollout-2026-12-01T13-21-30-01a231c4-7b9f-70b3-9be5-8568513de12f.jsonl');
    const forkRef = async () => (await discoverSessions({ env: { CODEX_HOME: home }, home: dir })).find((r) => r.baseThread !== undefined)!;
    const cache = new SummaryCache(storage());
    let ref = await forkRef();
    assert.equal(ref.basePath, parent);
    await cache.set(ref, summary(2));
    const st = statSync(parent);
    await cache.save();
    assert.equal((saved().entries[ref.key] as { base?: string }).base, `${parent}:${st.size}:${st.mtimeMs}`);
    assert.deepEqual(await cache.get(ref), summary(2));
    // Grown (the fork's own file unchanged): its stamp changed.
    appendFileSync(parent, '{"timestamp":"2026-12-01T13:30:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"later"}}\n');
    assert.equal(await cache.get(ref), undefined);
    await cache.set(ref, summary(2));
    assert.deepEqual(await cache.get(ref), summary(2));
    // Archived: the next listing names the new path.
    mkdirSync(join(home, 'archived_sessions'));
    renameSync(parent, join(home, 'archived_sessions', basename(parent)));
    ref = await forkRef();
    assert.equal(ref.basePath, join(home, 'archived_sessions', basename(parent)));
    assert.equal(await cache.get(ref), undefined);
    await cache.set(ref, summary(2));
    // Removed: none found (basePath null), stamp absent.
    rmSync(join(home, 'archived_sessions', basename(parent)));
    ref = await forkRef();
    assert.equal(ref.basePath, null);
    assert.equal(await cache.get(ref), undefined);
    assert.deepEqual(cache.stats, { hits: 2, misses: 3, dropped: 0, lockTimeouts: 0 });
  });

  it('an entry holds the capture folders\' stamp (the CLI identity\'s captures): bodies the proxy saves for the session after its summary are a miss', async () => {
    // The recorded Pi session whose bodies the proxy saved (test/fixtures/pi-capture): last written with its last request.
    const fx = 'test/fixtures/pi-capture/main';
    const sub = readdirSync(join(fx, 'agent/sessions'))[0];
    const name = readdirSync(join(fx, 'agent/sessions', sub))[0];
    const path = join(sessions, name);
    cpSync(join(fx, 'agent/sessions', sub, name), path);
    const t = new Date(JSON.parse(readFileSync(path, 'utf8').trim().split('\n').pop()!).timestamp as string);
    utimesSync(path, t, t);
    const ref = (await piRef(path, 'named'))!;
    const root = join(dir, 'captures');
    const cache = new SummaryCache(storage(), () => '', { env: { PREFIX_LENS_CAPTURE_DIRS: root } });
    // The proxy's folder without this session's bodies: no stamp, as for a session never captured.
    mkdirSync(root);
    await cache.set(ref, summary(16));
    assert.deepEqual(await cache.get(ref), summary(16));
    await cache.save();
    assert.equal((saved().entries[ref.key] as { captures?: string }).captures, undefined);
    // The bodies of the request day saved (the transcript unchanged): the analysis would join them, the summary is a miss.
    const day = readdirSync(join(fx, 'captures')).find((d) => /^\d{4}-\d\d-\d\d$/.test(d))!;
    cpSync(join(fx, 'captures', day), join(root, day), { recursive: true });
    assert.equal(await cache.get(ref), undefined);
    await cache.set(ref, summary(16));
    assert.deepEqual(await cache.get(ref), summary(16));
    await cache.save();
    assert.equal((saved().entries[ref.key] as { captures?: string }).captures, `${root}/${day}:${statSync(join(root, day)).mtimeMs}`);
    // A window on another environment (no capture folders) does not take it.
    assert.equal(await new SummaryCache(storage(), () => '', { env: { PREFIX_LENS_CAPTURE_DIRS: '' } }).get(ref), undefined);
    assert.deepEqual(cache.stats, { hits: 2, misses: 1, dropped: 0, lockTimeouts: 0 });
  });

  it('a summary whose capture folders changed during its analysis is not filed (the stamp before and after must match)', async () => {
    const fx = 'test/fixtures/opencode-capture';
    const db = join(dir, 'opencode.db');
    cpSync(join(fx, 'opencode.db'), db);
    const root = join(dir, 'captures');
    mkdirSync(root);
    const id = sessionIds(fx).sessions.basic;
    const ref = (await listSqliteSessions(db)).find((r) => r.id === id)!;
    releaseOpenCodeStores();
    const cache = new SummaryCache(storage(), () => '', { env: { PREFIX_LENS_CAPTURE_DIRS: root } });
    const before = await cache.capturesBefore(ref);
    // The session's own folder saved while it was analyzed (an OpenCode row: its folder is in the stamp).
    cpSync(join(fx, 'captures', `session-${id}`), join(root, `session-${id}`), { recursive: true });
    await cache.set(ref, summary(7), '', before);
    assert.equal(await cache.get(ref), undefined);
    // Analyzed again with the bodies in place: filed, and a hit.
    const again = await cache.capturesBefore(ref);
    assert.equal(again, `${root}/session-${id}:${statSync(join(root, `session-${id}`)).mtimeMs}`);
    await cache.set(ref, summary(7), '', again);
    assert.deepEqual(await cache.get(ref), summary(7));
    assert.deepEqual(cache.stats, { hits: 1, misses: 1, dropped: 0, lockTimeouts: 0 });
  });

  it('a summary judged under other rule overrides is a miss, also one filed with the basis its analysis started with', async () => {
    const ref = session('a.jsonl', '{"type":"session"}\n');
    let basis = '0.1.0:{"ttlSeconds":{},"prices":[]}';
    const cache = new SummaryCache(storage(), () => basis);
    // The analysis started under the old overrides; they changed before it was filed.
    const old = basis;
    basis = '0.1.0:{"ttlSeconds":{"openai":60},"prices":[]}';
    await cache.set(ref, summary(13), old);
    assert.equal(await cache.get(ref), undefined);
    assert.deepEqual(await cache.get(ref, old), summary(13));
  });

  it('two windows saving: neither drops the other\'s summaries (each merges what the file holds)', async () => {
    const a = session('a.jsonl', '{"type":"session","id":"a"}\n');
    const b = session('b.jsonl', '{"type":"session","id":"b"}\n');
    const c = session('c.jsonl', '{"type":"session","id":"c"}\n');
    const first = new SummaryCache(storage());
    const second = new SummaryCache(storage());
    await Promise.all([first.load(), second.load()]);
    await first.set(a, summary(1));
    await second.set(b, summary(2));
    await first.save();
    await second.save();
    assert.deepEqual(Object.keys(saved().entries).sort(), [a.key, b.key]);
    // At once, too (the lock file orders them).
    await first.set(c, summary(3));
    await second.set(a, summary(4));
    await Promise.all([first.save(), second.save()]);
    const entries = saved().entries;
    assert.deepEqual(Object.keys(entries).sort(), [a.key, b.key, c.key]);
    // The last window to set a session's summary wins; the other window reads it at its next save.
    assert.equal(entries[a.key].summary.requests, 4);
    await first.save();
    assert.equal(saved().entries[a.key].summary.requests, 4);
    assert.deepEqual((await first.get(b))?.requests, 2);
    // No temp or lock file is left behind.
    assert.deepEqual(readdirSync(storage()), ['session-summaries.json']);
  });

  it('a torn or damaged file is ignored and rewritten at the next save; an entry of another shape is dropped, the others kept', async () => {
    const a = session('a.jsonl', '{"type":"session","id":"a"}\n');
    const b = session('b.jsonl', '{"type":"session","id":"b"}\n');
    mkdirSync(storage(), { recursive: true });
    writeFileSync(file(), '{"format":2,"entries":{"x":{"size":3');
    const torn = new SummaryCache(storage());
    assert.equal(await torn.get(a), undefined);
    assert.equal(torn.stats.dropped, 1);
    await torn.set(a, summary(13));
    await torn.save();
    assert.deepEqual(Object.keys(saved().entries), [a.key]);

    const good = saved().entries[a.key];
    writeFileSync(file(), JSON.stringify({ format: 2, entries: { [a.key]: good, [b.key]: { ...good, summary: { title: 'x' } }, junk: 7 } }));
    const damaged = new SummaryCache(storage());
    assert.deepEqual(await damaged.get(a), summary(13));
    assert.equal(await damaged.get(b), undefined);
    assert.equal(damaged.stats.dropped, 2);
  });

  it('parseEntries: another format version is no entries and no damage; a non-object is damage', () => {
    assert.deepEqual(parseEntries('{"format":1,"entries":{"a":{}}}'), { entries: new Map(), dropped: 0 });
    assert.deepEqual(parseEntries('[]'), { entries: new Map(), dropped: 1 });
    assert.deepEqual(parseEntries('{"format":2,"entries":[]}'), { entries: new Map(), dropped: 1 });
    assert.deepEqual(parseEntries(''), { entries: new Map(), dropped: 1 });
  });

  it('a lock left by a save that died (older than 10 s) is taken over', async () => {
    const a = session('a.jsonl', '{"type":"session","id":"a"}\n');
    mkdirSync(storage(), { recursive: true });
    writeFileSync(`${file()}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file()}.lock`, old, old);
    const cache = new SummaryCache(storage());
    await cache.set(a, summary(13));
    await cache.save();
    assert.deepEqual(Object.keys(saved().entries), [a.key]);
    assert.deepEqual(readdirSync(storage()), ['session-summaries.json']);
    assert.equal(cache.stats.lockTimeouts, 0);
  });

  it('bounded: an entry not used for 60 days is dropped at the next save, a hit keeps it, and at most maxEntries (the most recently used) stay', async () => {
    const DAY = 24 * 3600 * 1000;
    let now = Date.UTC(2026, 11, 1);
    const clock = { now: () => now };
    const a = session('a.jsonl', 'a\n');
    const b = session('b.jsonl', 'bb\n');
    const c = session('c.jsonl', 'ccc\n');
    const cache = new SummaryCache(storage(), () => '', clock);
    await cache.set(a, summary(1));
    await cache.set(b, summary(2));
    await cache.save();
    assert.deepEqual(Object.values(saved().entries).map((e) => (e as { seenAt?: number }).seenAt), [now, now]);
    // 59 days on, a is looked up (its seenAt refreshed); two days later b is 61 days unused.
    now += 59 * DAY;
    assert.deepEqual(await cache.get(a), summary(1));
    now += 2 * DAY;
    await cache.save();
    assert.deepEqual(Object.keys(saved().entries), [a.key]);
    // A new window reads the file: b is gone, a still answers.
    const next = new SummaryCache(storage(), () => '', clock);
    assert.equal(await next.get(b), undefined);
    assert.deepEqual(await next.get(a), summary(1));

    // The cap keeps the most recently used.
    const capped = new SummaryCache(storage(), () => '', { ...clock, maxEntries: 2 });
    now += DAY;
    await capped.set(b, summary(2));
    now += DAY;
    await capped.set(c, summary(3));
    await capped.save();
    assert.deepEqual(Object.keys(saved().entries).sort(), [b.key, c.key]);
    // An entry saved without seenAt (an older build) counts as used when read: kept.
    const e = saved();
    for (const v of Object.values(e.entries)) delete (v as { seenAt?: number }).seenAt;
    writeFileSync(file(), JSON.stringify(e));
    now += 70 * DAY;
    const old = new SummaryCache(storage(), () => '', clock);
    assert.deepEqual(await old.get(c), summary(3));
    await old.save();
    assert.deepEqual(Object.keys(saved().entries).sort(), [b.key, c.key]);
  });
});
