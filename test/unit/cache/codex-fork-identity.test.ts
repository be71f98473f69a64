/**
 * A Codex 0.169 fork (test/fixtures/codex-agents: `session_meta.history_base` names the parent's
 * first 40 lines) is read with its parent's rollout, so its cached result (result and output
 * entries) and the warm entry's answer stand for the parent's file too: removed, restored, grown
 * or appearing after the fork was cached, the parent is read again (codex/locate.ts codexBaseStamp).
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.js';
import { warmJson } from '../../../src/cli/warm.js';

const DAY = 'sessions/2026/12/01';
const FORK = 'rollout-2026-12-01T13-21-34-01a231c4-8c57-7e42-bdd1-a6aa99bf54c4.jsonl';
const PARENT = 'rollout-2026-12-01T13-21-30-01a231c4-7b9f-70b3-9be5-8568513de12f.jsonl';
const NOT_FOUND =
  "fork of 01a231c4-7b9f-70b3-9be5-8568513de12f: its parent rollout (the history it goes on from) was not found beside it; the fork's requests hold only its own items";

interface Report {
  sessions: Array<{ diagnostics: Array<{ line: number; severity: string; message: string }>; requests: Array<{ verdict: string; segmentTable: Array<{ segment: string; blocks: number }> }> }>;
}

describe('Codex fork: cached results stand for the parent rollout too', () => {
  let dir: string;
  let home: string;
  let fork: string;
  let parent: string;
  const saved: Record<string, string | undefined> = {};
  const ENV = ['XDG_CACHE_HOME', 'XDG_STATE_HOME', 'CODEX_HOME'] as const;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-codex-fork-'));
    for (const k of ENV) saved[k] = process.env[k];
    home = join(dir, 'codex');
    process.env.XDG_CACHE_HOME = join(dir, 'xdg');
    process.env.XDG_STATE_HOME = join(dir, 'state'); // no capture folders
    process.env.CODEX_HOME = home;
    cpSync('test/fixtures/codex-agents/codex', home, { recursive: true });
    fork = join(home, DAY, FORK);
    parent = join(home, DAY, PARENT);
  });
  afterEach(() => {
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    rmSync(dir, { recursive: true, force: true });
  });
  /** A full `analyze --json <fork>` (through the result and output caches). */
  const full = async () => {
    const out: string[] = [];
    const code = await main(['analyze', '--json', fork], (s) => out.push(s), () => {}, process.cwd());
    assert.equal(code, 0);
    return `${out.join('\n')}\n`;
  };
  /** The warm entry's answer, or null when it misses. */
  const warm = async () => {
    const parts: Buffer[] = [];
    const code = await warmJson(['analyze', '--json', fork], {
      cwd: process.cwd(),
      env: process.env,
      cacheDir: join(dir, 'xdg/prefix-lens'),
      sink: { line: (t) => void parts.push(Buffer.from(`${t}\n`)), bytes: (b) => void parts.push(Buffer.from(b)) },
    });
    return code === null ? null : Buffer.concat(parts).toString('utf8');
  };
  /** The fork's diagnostics and, per request, its verdict and messages blocks. */
  const summary = (text: string) => {
    const [s] = (JSON.parse(text) as Report).sessions;
    return {
      diagnostics: s.diagnostics.map((d) => `${d.severity} line ${d.line}: ${d.message}`),
      requests: s.requests.map((r) => `${r.verdict} ${r.segmentTable.find((t) => t.segment === 'messages')!.blocks}`),
    };
  };
  // With its parent the fork's first request holds the parent's 12 items and its own 2.
  const WITH_PARENT = { diagnostics: [], requests: ['cold 14', 'break 16'] };
  const WITHOUT_PARENT = { diagnostics: [`warning line 1: ${NOT_FOUND}`], requests: ['cold 1', 'break 3'] };

  it('removed parent: the next run says it was not found; restored: the fork holds its items again', async () => {
    const first = await full();
    assert.deepEqual(summary(first), WITH_PARENT);
    assert.equal(await warm(), first, 'the second run is answered by the warm entry');
    assert.equal(await full(), first, 'and by the cache');

    renameSync(parent, join(dir, PARENT));
    assert.equal(await warm(), null, 'parent removed: the warm entry misses');
    const without = await full();
    assert.deepEqual(summary(without), WITHOUT_PARENT);
    assert.equal(await warm(), without, 'the parentless result is cached in turn');

    // A parent that appears after the fork was cached without one.
    renameSync(join(dir, PARENT), parent);
    assert.equal(await warm(), null, 'parent back: the warm entry misses');
    assert.deepEqual(summary(await full()), WITH_PARENT);
    assert.equal(await warm(), first);
  });

  it('a parent moved to archived_sessions is found there; one that grew is read again (any change of size or mtime)', async () => {
    const first = await full();
    cpSync(parent, join(home, 'archived_sessions', PARENT));
    rmSync(parent);
    assert.equal(await warm(), null, 'moved: the warm entry misses');
    assert.equal(await full(), first, 'the archived parent gives the same requests');

    appendFileSync(join(home, 'archived_sessions', PARENT), `${JSON.stringify({ timestamp: '2026-12-01T13:30:00.000Z', type: 'event_msg', payload: { type: 'agent_message', message: 'later' } })}\n`);
    assert.equal(await warm(), null, 'grown: the warm entry misses');
    // The fork reads only the parent's first 40 lines: the appended one changes nothing.
    assert.equal(await full(), first);
    assert.equal(await warm(), first);
  });
});
