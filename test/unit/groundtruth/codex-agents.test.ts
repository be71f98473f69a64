/**
 * Ground truth for a Codex sub-agent and a fork (test/fixtures/codex-agents, real Codex 0.169.0):
 * each is its own rollout and conversation (its own lineage), linked to the parent; the fork sends
 * its own `prompt_cache_key`, the sub-agent its parent's (session_meta `session_id`); the fork's history (named by `history_base`, not copied)
 * is rebuilt from the parent's rollout byte for byte, and the parent's usage is not counted twice.
 * Runs on the committed recording and on a fresh one when PREFIX_LENS_FRESH_CODEX_AGENTS names it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { blocksOf } from '../../../src/core/chain.js';
import type { Session } from '../../../src/core/model.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { discoverSessions } from '../../../src/hosts/registry.js';
import { scenarios } from './scenarios.js';
import { rollouts } from '../codex/helpers.js';


interface Meta {
  status: number;
  responseId: string | null;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number } | null;
  decision: { kind: string; name?: string };
}

const bodyName = (r: { notes?: string[] }) => r.notes!.find((n) => n.startsWith('wire: '))!.slice(6);
const msgBlocks = (s: Session, i: number) => blocksOf(s.requests[i].tail).filter((b) => b.segment === 'messages').map((b) => [b.path, Buffer.from(b.bytes).toString('utf8')]);

for (const sc of scenarios('test/fixtures/codex-agents', 'PREFIX_LENS_FRESH_CODEX_AGENTS')) {
  describe(`Codex sub-agent and fork ground truth (${sc.name})`, () => {
    let parent: Session;
    let agent: Session;
    let fork: Session;
    let wire: Record<'parent' | 'agent' | 'fork', Session>;
    let metas: Meta[];
    let bodies: string[];
    before(async () => {
      const sessions: Session[] = [];
      const wired: Session[] = [];
      for (const f of rollouts(sc.dir)) {
        sessions.push(...(await readCodexSession(f)));
        wired.push(...(await readCodexSession(f, { requestsDir: join(sc.dir, 'requests') })));
      }
      assert.equal(sessions.length, 3);
      const role = (s: Session) => (s.title?.startsWith('fork of') ? 'fork' : s.parentId ? 'agent' : 'parent');
      [parent, agent, fork] = (['parent', 'agent', 'fork'] as const).map((k) => sessions.find((s) => role(s) === k)!);
      wire = Object.fromEntries(wired.map((s) => [role(s), s])) as typeof wire;
      bodies = readdirSync(join(sc.dir, 'requests')).filter((f) => f.endsWith('.body.json')).sort();
      metas = bodies.map((b) => JSON.parse(readFileSync(join(sc.dir, 'requests', b.replace('.body.json', '.meta.json')), 'utf8')) as Meta);
    });

    it('reads three conversations: the parent (4 requests), its sub-agent (1) and a fork (2), each linked to the parent', () => {
      for (const s of [parent, agent, fork]) assert.deepEqual(s.diagnostics, [], s.path);
      assert.deepEqual([parent, agent, fork].map((s) => s.requests.length), [4, 1, 2]);
      assert.equal(parent.parentId, undefined);
      assert.equal(agent.parentId, parent.id);
      assert.equal(fork.parentId, parent.id);
      assert.equal(fork.title, `fork of ${parent.id}`);
      const decisions = metas.map((m) => m.decision.name ?? m.decision.kind);
      // The parent's wait_agent call and the sub-agent's first request are sent at the same time:
      // the proxy numbers them as they arrive, in either order (seen both ways in fresh recordings).
      assert.deepEqual([...decisions.slice(0, 2), ...decisions.slice(2, 4).sort(), ...decisions.slice(4)], ['text', 'spawn_agent', 'text', 'wait_agent', 'text', 'text', 'text']);
    });

    it("cache keys as every body sends them: the fork its own, the sub-agent its parent's (own thread, shared key)", () => {
      assert.equal(new Set([parent.id, agent.id, fork.id]).size, 3);
      assert.ok(parent.requests.every((r) => r.cacheKey === parent.id));
      assert.ok(fork.requests.every((r) => r.cacheKey === fork.id));
      assert.ok(agent.requests.every((r) => r.cacheKey === parent.id));
      // With the bodies, each session takes exactly its own (client_metadata.thread_id).
      // Bodies 3 and 4 (arrival order) are the parent's wait_agent call and the sub-agent's request, either way round.
      const [waitCall, agentCall] = metas[2].decision.name === 'wait_agent' ? [bodies[2], bodies[3]] : [bodies[3], bodies[2]];
      assert.deepEqual(wire.parent.requests.map(bodyName), [bodies[0], bodies[1], waitCall, bodies[4]]);
      assert.deepEqual(wire.agent.requests.map(bodyName), [agentCall]);
      assert.deepEqual(wire.fork.requests.map(bodyName), [bodies[5], bodies[6]]);
      for (const [k, s] of Object.entries(wire)) {
        for (const r of s.requests) {
          const body = JSON.parse(readFileSync(join(sc.dir, 'requests', bodyName(r)), 'utf8')) as { prompt_cache_key: string; client_metadata: { thread_id: string } };
          assert.equal(body.prompt_cache_key, k === 'agent' ? parent.id : s.id, `${k} ${bodyName(r)}`);
          assert.equal(body.client_metadata.thread_id, s.id, `${k} ${bodyName(r)}`);
          assert.equal(r.cacheKey, body.prompt_cache_key);
        }
      }
    });

    it("rebuilds every request's input items after the leading ones byte for byte, the fork's history from the parent's rollout", () => {
      for (const k of ['parent', 'agent', 'fork'] as const) {
        const s = { parent, agent, fork }[k];
        s.requests.forEach((_, i) => assert.deepEqual(msgBlocks(s, i), msgBlocks(wire[k], i), `${k} #${i + 1}`));
      }
      // The fork sends the parent's whole history (its last request's input and answer) and the new prompt.
      const last = JSON.parse(readFileSync(join(sc.dir, 'requests', bodies[4]), 'utf8')) as { input: unknown[] };
      const forked = JSON.parse(readFileSync(join(sc.dir, 'requests', bodies[5]), 'utf8')) as { input: unknown[] };
      assert.equal(forked.input.length, last.input.length + 2);
      assert.deepEqual(forked.input.slice(1, last.input.length), last.input.slice(1));
      assert.equal(msgBlocks(fork, 0).length, msgBlocks(parent, 3).length + 2);
    });

    it('judges each lineage on its own: the sub-agent and the fork start cold, the fork breaks at the effort change', () => {
      const verdicts = (s: Session) => analyzeSession(s).requests.map((r) => r.verdict);
      for (const k of ['parent', 'agent', 'fork'] as const) {
        const s = { parent, agent, fork }[k];
        assert.deepEqual(verdicts(s), { parent: ['cold', 'hit', 'hit', 'hit'], agent: ['cold'], fork: ['cold', 'break'] }[k], k);
        assert.deepEqual(verdicts(wire[k]), verdicts(s), `${k} wire`);
      }
      // The provider's cache is keyed by prompt_cache_key too: the fork reads nothing of the parent's prefix.
      assert.equal(fork.requests[0].usage!.cacheRead, 0);
      // The break is the parameter, in both modes: reasoning.effort (none) → high, the prefix bytes unchanged.
      for (const s of [fork, wire.fork]) {
        const r = analyzeSession(s).requests[1];
        assert.equal(r.break?.segment, 'params', s.path);
        assert.equal(r.break?.path, 'reasoning.effort');
        assert.deepEqual(r.causes.map((c) => [c.kind, c.detail]), [['params-changed', 'reasoning.effort: (none) → high (invalidates the whole prefix)']]);
        assert.equal(r.request.usage!.cacheRead, 0);
      }
      assert.equal(analyzeSession(fork).requests[1].lostTokens, analyzeSession(wire.fork).requests[1].lostTokens);
    });

    it("rebuilds the parameters turn_context carries: every request's reasoning.effort as its body sends it", () => {
      let n = 0;
      for (const s of [parent, agent, fork]) {
        for (const r of s.requests) {
          const w = Object.values(wire).flatMap((x) => x.requests).find((x) => x.responseId === r.responseId)!;
          const body = JSON.parse(readFileSync(join(sc.dir, 'requests', bodyName(w)), 'utf8')) as { model: string; reasoning?: { effort?: string } };
          assert.equal(r.model, body.model);
          assert.equal(r.params['reasoning.effort'], body.reasoning?.effort, `${s.id} #${r.index}`);
          assert.equal(r.params['reasoning.effort'], w.params['reasoning.effort']);
          n++;
        }
      }
      assert.equal(n, 7);
      assert.deepEqual(fork.requests.map((r) => r.params), [{}, { 'reasoning.effort': 'high' }]);
    });

    it("usage oracle: per request and in total, usage equals the provider's, the fork's history not counted again", () => {
      const byId = new Map(metas.map((m) => [m.responseId!, m]));
      const total = { uncached: 0, cacheRead: 0, output: 0 };
      for (const s of [parent, agent, fork]) {
        for (const r of s.requests) {
          const u = byId.get(r.responseId!)!.usage!;
          const cached = u.input_tokens_details.cached_tokens;
          assert.deepEqual(r.usage, { uncached: u.input_tokens - cached, cacheRead: cached, cacheWrite: 0, output: u.output_tokens });
          total.uncached += r.usage!.uncached;
          total.cacheRead += r.usage!.cacheRead;
          total.output += r.usage!.output;
        }
      }
      const provider = { uncached: 0, cacheRead: 0, output: 0 };
      for (const m of metas) {
        provider.uncached += m.usage!.input_tokens - m.usage!.input_tokens_details.cached_tokens;
        provider.cacheRead += m.usage!.input_tokens_details.cached_tokens;
        provider.output += m.usage!.output_tokens;
      }
      assert.deepEqual(total, provider);
    });

    it('discovery lists the three with their parent links', async () => {
      const refs = (await discoverSessions({ env: { CODEX_HOME: join(sc.dir, 'codex') }, home: '/nohome', paths: {} })).filter((r) => r.host === 'codex');
      assert.deepEqual(refs.map((r) => [r.id, r.parentId]).sort(), [
        [parent.id, null],
        [agent.id, parent.id],
        [fork.id, parent.id],
      ].sort());
    });
  });
}
