/**
 * Claude Code through the host registry: discovery in `$CLAUDE_CONFIG_DIR`, `claude:<id prefix>`,
 * a walk over the recording (the sub-agent file is read with its session, not listed alone, and
 * not taken for a Pi session), and the CLI on the recorded session.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { main } from '../../../src/cli/main.js';
import { discoverSessions, findSessions, openRef, resolveArg } from '../../../src/hosts/registry.js';
import type { Report } from '../../../src/report/json.js';
import { mainTranscript } from './helpers.js';

const DIR = 'test/fixtures/claude-code';
const env = { CLAUDE_CONFIG_DIR: resolve(DIR, 'claude') };

describe('Claude Code in the host registry', () => {
  let id: string;
  before(() => {
    id = mainTranscript(DIR).split('/').pop()!.replace('.jsonl', '');
  });

  it('discovers the one main session in $CLAUDE_CONFIG_DIR/projects (not the sub-agent file)', async () => {
    const refs = (await discoverSessions({ env, home: '/nohome', paths: {} })).filter((r) => r.host === 'claude-code');
    assert.deepEqual(refs.map((r) => [r.id, r.project, r.firstPrompt]), [[id, '/tmp/prefix-lens-cc-lab/project', 'Hello. Say hi.']]);
  });

  it('resolves claude:<id prefix> and claude: (newest); an unknown prefix matches nothing', async () => {
    assert.deepEqual((await resolveArg(`claude:${id.slice(0, 8)}`, { env, home: '/nohome' })).map((r) => r.id), [id]);
    assert.deepEqual((await resolveArg('claude:', { env, home: '/nohome' })).map((r) => r.id), [id]);
    assert.deepEqual(await resolveArg('claude:zzzz', { env, home: '/nohome' }), []);
  });

  it('finds the session by walking the recording folder; the file named alone is Claude Code, not Pi', async () => {
    assert.deepEqual((await findSessions(DIR)).map((r) => [r.host, r.id]), [['claude-code', id]]);
    assert.deepEqual((await findSessions(mainTranscript(DIR))).map((r) => r.host), ['claude-code']);
  });

  it('opens a ref as the session plus its sub-agent', async () => {
    const [ref] = await findSessions(DIR);
    const sessions = await openRef(ref);
    assert.deepEqual(sessions.map((s) => [s.host, s.requests.length, s.parentId ?? null]), [
      ['claude-code', 12, null],
      ['claude-code', 1, id],
    ]);
  });

  it('prefix-lens analyze --json on the recording: verdicts of the 12 main requests', async () => {
    let out = '';
    const code = await main(['analyze', '--json', '--no-cache', mainTranscript(DIR)], (s) => (out += s), () => {});
    assert.equal(code, 0);
    const report = JSON.parse(out) as Report;
    assert.deepEqual(report.sessions.map((s) => s.requests.length), [12, 1]);
    // cold, 5 hits, the HTTP 500 attempt, its retry (the task notification sent as a string instead
    // of one text block, which the provider read past: a hit), the first request after /compact
    // (billing header changed), the model switch, 2 hits.
    assert.deepEqual(report.sessions[0].requests.map((r) => r.verdict), ['cold', 'hit', 'hit', 'hit', 'hit', 'hit', 'unknown', 'hit', 'break', 'model-switch', 'hit', 'hit']);
    assert.deepEqual(report.sessions[0].requests.map((r) => (r.break ? `${r.break.segment}[${r.break.blockIndex}]` : null)).filter(Boolean), ['system[0]']);
    assert.deepEqual(report.sessions[0].requests[7].causes, [
      {
        kind: 'representation-only',
        detail: 'same text, other encoding at message 10 (the provider still read the cache past it: 22937 tokens read, ~22571 expected up to the change)',
        certainty: 'likely',
        representation: 'other-encoding',
      },
    ]);
    assert.equal(report.sessions[0].requests[7].lostTokens, 0);
    assert.match(report.sessions[0].requests[6].error!, /^500 fake provider: scripted 500/);
  });
});
