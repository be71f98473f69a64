/**
 * Codex through the host registry: discovery in `$CODEX_HOME`, `codex:<id prefix>`, a walk over
 * the recording (the rollout is Codex's, not taken for Pi), and the CLI on the recorded session.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { main } from '../../../src/cli/main.js';
import { discoverSessions, findSessions, resolveArg } from '../../../src/hosts/registry.js';
import type { Report } from '../../../src/report/json.js';
import { rollout } from './helpers.js';

const DIR = 'test/fixtures/codex';
const env = { CODEX_HOME: resolve(DIR, 'codex') };

describe('Codex in the host registry', () => {
  let id: string;
  before(() => {
    id = /rollout-.*?-([0-9a-f]{8}-[0-9a-f-]{27})\.jsonl$/.exec(rollout(DIR))![1];
  });

  it('discovers the rollout in $CODEX_HOME/sessions with its id, cwd and first prompt', async () => {
    const refs = (await discoverSessions({ env, home: '/nohome', paths: {} })).filter((r) => r.host === 'codex');
    assert.deepEqual(refs.map((r) => [r.id, r.project, r.firstPrompt]), [[id, '/tmp/prefix-lens-codex-lab/project', 'Hello codex. Say hi.']]);
  });

  it('resolves codex:<id prefix> and codex: (newest); an unknown prefix matches nothing', async () => {
    assert.deepEqual((await resolveArg(`codex:${id.slice(0, 13)}`, { env, home: '/nohome' })).map((r) => r.id), [id]);
    assert.deepEqual((await resolveArg('codex:', { env, home: '/nohome' })).map((r) => r.id), [id]);
    assert.deepEqual(await resolveArg('codex:zzzz', { env, home: '/nohome' }), []);
  });

  it('finds the session by walking the recording; the rollout named alone is Codex, not Pi', async () => {
    assert.deepEqual((await findSessions(DIR)).map((r) => [r.host, r.id]), [['codex', id]]);
    assert.deepEqual((await findSessions(rollout(DIR))).map((r) => r.host), ['codex']);
  });

  it('prefix-lens analyze --json: 9 requests (the compaction call a summary, cold: its own head), the head breaks after it', async () => {
    let out = '';
    const saved = process.env.CODEX_HOME;
    process.env.CODEX_HOME = env.CODEX_HOME;
    try {
      assert.equal(await main(['analyze', '--json', '--no-cache', `codex:${id.slice(0, 13)}`], (s) => (out += s), () => {}), 0);
    } finally {
      if (saved === undefined) delete process.env.CODEX_HOME;
      else process.env.CODEX_HOME = saved;
    }
    const report = JSON.parse(out) as Report;
    const [s] = report.sessions;
    assert.equal(s.host, 'codex');
    // The compaction call (#7) sends no tools (body 008; OpenAI renders tools first): it shares no
    // prefix with the agent requests and reads nothing, cold as on the wire, not a head break
    // (which billed it ~10,528 lost tokens). The request after it breaks at system 1, as on the
    // wire: the leading developer item (skills) is gone from the replacement history; the opaque
    // head (tools + instructions) before it is read (expected 8,576 = read).
    assert.deepEqual(s.requests.map((r) => r.verdict), ['cold', 'hit', 'hit', 'hit', 'hit', 'model-switch', 'cold', 'break', 'hit']);
    assert.deepEqual(s.requests.map((r) => r.break?.segment ?? null), [null, null, null, null, null, null, null, 'system', null]);
    assert.deepEqual([s.requests[7].break?.blockIndex, s.requests[7].break?.path, s.requests[7].expectedRead, s.requests[7].observedRead], [1, 'input[1]', 8576, 8576]);
    // It re-bills nothing: what follows the head is the compacted history, new to the cache.
    assert.deepEqual(s.requests.map((r) => r.lostTokens), [0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(s.requests.map((r) => r.kind), ['agent', 'agent', 'agent', 'agent', 'agent', 'agent', 'summary', 'agent', 'agent']);
    assert.deepEqual(s.requests[7].causes.map((c) => [c.kind, c.certainty]), [['history-rewritten', 'certain'], ['system-changed', 'certain']]);
  });
});
