/**
 * `prefix-lens analyze` on BotHarness input: a DSH home, one session log, `botharness:<id>` in
 * $DSH_HOME; the terminal report's persona line and the `--json` `persona` field.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { runCli } from '../../runCli.js';
import { discoverSessions, resolveArg } from '../../../src/hosts/registry.js';
import type { Report } from '../../../src/report/json.js';
import { buildScenarios, type Built } from './scenarios.js';

const run = runCli;

describe('prefix-lens CLI on BotHarness (DSH) sessions', () => {
  let built: Built;
  const saved = process.env.DSH_HOME;
  before(async () => (built = await buildScenarios()));
  after(() => {
    if (saved === undefined) delete process.env.DSH_HOME;
    else process.env.DSH_HOME = saved;
    rmSync(built.main, { recursive: true, force: true });
    rmSync(built.old, { recursive: true, force: true });
  });

  it('a DSH home: every session log below sessions/, one persona line each', async () => {
    const { code, out } = await run(['analyze', built.main, '--no-cache']);
    assert.equal(code, 0);
    const ids = [...out.matchAll(/^botharness session (\S+)/gm)].map((m) => m[1]);
    assert.deepEqual(ids, ['bh-compaction', 'bh-damaged', 'bh-drift', 'bh-empty', 'bh-memory', 'bh-none', 'bh-reowned', 'bh-stable']);
    const persona = out.split('\n').filter((l) => l.startsWith('  persona: '));
    assert.equal(persona.length, 8);
    assert.ok(persona.includes('  persona: snapshot e12061dff5db (181 bytes, taken 2026-10-08T08:00:02.000Z, bot dora); drift; #1 taken, #3 drift, #4 memory-head'));
    assert.ok(persona.includes('  persona: empty snapshot (taken 2026-10-08T08:00:02.000Z); stable; #1 taken'));
    assert.ok(persona.includes('  persona: no snapshot taken yet; none'));
    assert.match(out, /^ {4}#3 drift at system byte 268: persona section changed outside a compaction \(persona-drift\): 181 → 201 bytes$/m);
    assert.match(out, /^ {6}before: ## Soul \(SOUL\.md\) \[1% — 50\/5,000 chars\]⏎⏎You are Ada\./m);
  });

  it('one session log, and --json carries the persona field', async () => {
    const { code, out } = await run(['analyze', built.logs['bh-compaction'], '--json', '--no-cache']);
    assert.equal(code, 0);
    const r = JSON.parse(out) as Report;
    assert.equal(r.sessions.length, 1);
    const s = r.sessions[0];
    assert.deepEqual([s.host, s.id, s.requests.length], ['botharness', 'bh-compaction', 3]);
    assert.deepEqual(s.persona!.events.map((e) => [e.request, e.kind, e.hash]), [[1, 'taken', 'e12061dff5db'], [3, 'refreshed', '8e986229fc09']]);
    assert.equal(s.persona!.snapshot.hash, '8e986229fc09');
  });

  it('botharness:<id prefix> resolves in $DSH_HOME (botharness: alone = the newest session)', async () => {
    process.env.DSH_HOME = built.main;
    const refs = await resolveArg('botharness:bh-re', { env: process.env, home: '/nonexistent' });
    assert.deepEqual(refs.map((x) => [x.host, x.id, x.project]), [['botharness', 'bh-reowned', '/home/user/botlab']]);
    const { code, out } = await run(['analyze', 'botharness:bh-reowned', '--no-cache']);
    assert.equal(code, 0);
    assert.match(out, /^ {2}persona: snapshot cd78b5bd5947 \(177 bytes, taken 2026-10-08T08:00:11\.000Z, bot bea\); reowned; #1 taken, #3 reowned$/m);
    assert.equal((await resolveArg('botharness:', { env: process.env, home: '/nonexistent' })).length, 1);
    const all = await discoverSessions({ env: { DSH_HOME: built.main }, home: '/nonexistent' });
    assert.equal(all.filter((x) => x.host === 'botharness').length, 8);
  });

  it('the bundled example home (npm run fixtures:botharness) is what the scenarios build today', async () => {
    const view = async (path: string) => {
      const { code, out } = await run(['analyze', path, '--json', '--no-cache']);
      assert.equal(code, 0);
      return (JSON.parse(out) as Report).sessions.map((s) => ({ id: s.id, persona: s.persona, verdicts: s.requests.map((r) => [r.verdict, r.prefixHash, r.causes]) }));
    };
    const bundled = await view('examples/botharness');
    assert.equal(bundled.length, 8);
    assert.deepEqual(bundled, await view(built.main));
  });

  it('an older database: the diagnostic is printed, the session still analyzed (exit 0)', async () => {
    const { code, out } = await run(['analyze', built.old, '--no-cache']);
    assert.equal(code, 0);
    assert.match(out, /^ {2}persona: snapshot unknown; unknown$/m);
    assert.match(out, /warning: .*botharness\.db: session_ownership has no persona_snapshot \/ persona_snapshot_at columns \(schema generation 6\)/);
  });
});
