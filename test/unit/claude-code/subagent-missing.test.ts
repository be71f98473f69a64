/**
 * A sub-agent's captured bodies without the sub-agent's transcript (deleted, not copied, an older
 * layout) are the sub-agent's own session, never requests of the parent: judged in the parent's
 * lineage, the sub-agent's first request (other tools from tools[3] on, another system prompt and
 * history) was a false `tools-changed` break of ~11k tokens at tools[3]. On the 2.1.328 recording
 * (test/fixtures/claude-code): body 006 is the sub-agent's (`x-claude-code-agent-id:
 * aa4455826cc83258f`, billing header `cc_is_subagent=true`).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { analyzeSession, type SessionAnalysis } from '../../../src/core/analyze.js';
import type { Session } from '../../../src/core/model.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { analyzeJson, essence } from '../groundtruth/wire-essence.js';
import { mainTranscript } from './helpers.js';

const FIXTURE = 'test/fixtures/claude-code';
const REQUESTS = join(FIXTURE, 'requests');
const AGENT = 'aa4455826cc83258f';

/** Verdict, break and re-billed tokens per request: what must not depend on the sub-agent's transcript. */
const judged = (a: SessionAnalysis) => a.requests.map((r) => [r.request.index, r.verdict, r.prefixHash, r.break && [r.break.segment, r.break.blockIndex, r.break.path, r.break.byteOffset], r.causes.map((c) => c.kind), r.lostTokens]);

describe('Claude Code: a sub-agent whose transcript is missing', () => {
  let tmp: string;
  let alone: string;
  let full: Session[];
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pl-cc-subagent-'));
    const main = mainTranscript(FIXTURE);
    alone = join(tmp, 'project', basename(main));
    mkdirSync(join(tmp, 'project'));
    copyFileSync(main, alone); // no `<session>/subagents/` beside it
    full = await readClaudeSession(main, { requestsDir: REQUESTS });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('its body becomes its own session (its agent id, the parent as parentId), cold, not a break of the parent', async () => {
    const s = await readClaudeSession(alone, { requestsDir: REQUESTS });
    assert.equal(s.length, 2);
    const [main, sub] = s;
    assert.equal(main.requests.length, 13);
    assert.equal(sub.id, AGENT);
    assert.equal(sub.parentId, main.id);
    assert.equal(sub.title, `sub-agent ${AGENT} (no transcript)`);
    assert.deepEqual(sub.requests.map((r) => [r.index, basename(r.source.file), r.evidence, r.kind, r.usage]), [
      [1, '006-anthropic-messages.body.json', 'wire', 'agent', { uncached: 0, cacheRead: 0, cacheWrite: 11210, output: 17 }],
    ]);
    assert.deepEqual(sub.diagnostics.map((d) => [basename(d.file), d.line, d.severity]), [['006-anthropic-messages.body.json', 1, 'warning']]);
    assert.match(sub.diagnostics[0].message, /^sub-agent aa4455826cc83258f: no transcript of it was found/);
    const a = analyzeSession(sub);
    assert.deepEqual(a.requests.map((r) => [r.verdict, r.break, r.lostTokens]), [['cold', null, 0]]);
    // The parent: one break (#10, the billing header after /compact), none at tools[3].
    const m = analyzeSession(main);
    assert.deepEqual(m.requests.filter((r) => r.verdict === 'break').map((r) => [r.request.index, r.break!.segment, r.break!.blockIndex, r.break!.byteOffset, r.lostTokens]), [[10, 'system', 0, 14062, 19213]]);
    assert.equal(m.totals.cacheWrite, 68525);
    assert.equal(m.totals.lostTokens, 19213);
  });

  it('judges the parent exactly as with the sub-agent transcript present', async () => {
    const [main] = await readClaudeSession(alone, { requestsDir: REQUESTS });
    assert.deepEqual(judged(analyzeSession(main)), judged(analyzeSession(full[0])));
  });

  it('without the agent-id header, the billing header`s cc_is_subagent marks it (session named by its first message)', async () => {
    const dir = join(tmp, 'no-headers');
    mkdirSync(dir);
    for (const f of readdirSync(REQUESTS).filter((f) => /\.(body|meta)\.json$/.test(f))) {
      if (f.endsWith('.body.json')) copyFileSync(join(REQUESTS, f), join(dir, f));
      else {
        const meta = JSON.parse(readFileSync(join(REQUESTS, f), 'utf8')) as Record<string, unknown>;
        delete meta.headers;
        writeFileSync(join(dir, f), JSON.stringify(meta));
      }
    }
    const s = await readClaudeSession(alone, { requestsDir: dir });
    assert.equal(s.length, 2);
    assert.equal(s[1].id, 'sub-agent-9dbc0566f310');
    assert.deepEqual(s[1].requests.map((r) => basename(r.source.file)), ['006-anthropic-messages.body.json']);
    assert.deepEqual(judged(analyzeSession(s[0])), judged(analyzeSession(full[0])));
  });

  it('a failed attempt of a sub-agent whose transcript exists goes to that sub-agent, not to the parent', async () => {
    // The sub-agent's body sent twice, the first answered with HTTP 500 (no response id).
    const dir = join(tmp, 'retry');
    mkdirSync(dir);
    const files = readdirSync(REQUESTS).filter((f) => f.endsWith('.body.json')).sort().map((f) => join(REQUESTS, f));
    const failed = join(dir, '006-anthropic-messages.body.json');
    copyFileSync(join(REQUESTS, '006-anthropic-messages.body.json'), failed);
    const meta = JSON.parse(readFileSync(join(REQUESTS, '006-anthropic-messages.meta.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(failed.replace('.body.json', '.meta.json'), JSON.stringify({ ...meta, status: 500, responseId: null, usage: null }));
    files.splice(5, 0, failed);
    const s = await readClaudeSession(mainTranscript(FIXTURE), { requestsDir: { label: dir, files } });
    assert.deepEqual(s.map((x) => [x.id, x.requests.length]), [[full[0].id, 13], [AGENT, 2]]);
    assert.deepEqual(s[1].requests.map((r) => [r.index, r.error ?? null, r.usage?.cacheWrite ?? null]), [[1, 'HTTP 500', null], [2, null, 11210]]);
    assert.deepEqual(analyzeSession(s[1]).requests.map((r) => r.verdict), ['unknown', 'cold']);
    assert.deepEqual(judged(analyzeSession(s[0])), judged(analyzeSession(full[0])));
  });

  it('analyze --json through the capture join (no --requests): the same two sessions', async () => {
    const caps = join(tmp, 'captures');
    const folder = join(caps, `session-${full[0].id}`);
    mkdirSync(folder, { recursive: true });
    for (const f of readdirSync(REQUESTS).filter((f) => /\.(body|meta)\.json$/.test(f))) copyFileSync(join(REQUESTS, f), join(folder, f));
    const auto = await analyzeJson(['--captures', caps, alone]);
    const given = await analyzeJson(['--requests', REQUESTS, mainTranscript(FIXTURE)]);
    assert.deepEqual(auto.sessions.map((s) => [s.id, s.parentId, s.requests.length]), [[full[0].id, null, 13], [AGENT, full[0].id, 1]]);
    assert.deepEqual(auto.sessions[0].requests.map(essence), given.sessions[0].requests.map(essence));
    assert.deepEqual(auto.sessions[1].requests.map(essence), given.sessions[1].requests.map(essence));
    assert.equal(auto.sessions[0].totals.breaks, 1);
  });
});
