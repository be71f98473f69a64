import assert from 'node:assert/strict';
import { parseAgentList } from '../../../src/phux/agentList.js';
import { fixture } from './helpers.js';

const ok = (text: string) => {
  const r = parseAgentList(text);
  if (!r.ok) assert.fail(`expected a valid list, got ${r.message}`);
  return r.list;
};

describe('phux agent list --json schema', () => {
  it('accepts the docs/consumers/agents.md §4.7 example verbatim', () => {
    const list = ok(fixture('phux-agent-list-docs-example.json'));
    assert.equal(list.agents.length, 1);
    const row = list.agents[0];
    assert.deepEqual([row.terminal, row.agent.kind, row.state, row.attention, row.confidence], ['@3', 'codex', 'blocked', 'high', 0.95]);
    assert.equal(row.sources[0].kind, 'title_ask');
  });

  it('reads the mixed fleet in byte order, with open_code and detector_rule rule/region', () => {
    const list = ok(fixture('phux-agent-list-mixed-fleet.json'));
    assert.deepEqual(list.agents.map((a) => a.terminal), ['@1', '@10', '@2', '@4', '@7']);
    assert.deepEqual(list.agents.map((a) => a.agent.kind), ['claude', 'open_code', 'pi', 'unknown', 'codex']);
    assert.deepEqual([list.agents[0].sources[1].rule, list.agents[0].sources[1].region], ['title-busy-spinner', 'title']);
    assert.equal(list.agents[0].sources[0].rule, undefined);
  });

  it('keeps the no-phux agent_session object or null', () => {
    const list = ok(fixture('phux-agent-list-with-agent-session.json'));
    assert.deepEqual(list.agents[0].agent_session, { resource: '@14', provider: 'claude', native_id: '5f0c2d7e-1b9a-4c3e-8d21-7a6f0e9b4c52' });
    assert.equal(list.agents[1].agent_session, null);
  });

  it('accepts the empty fleet', () => {
    assert.deepEqual(ok(fixture('phux-agent-list-empty.json')).agents, []);
  });

  it('treats agent.kind as an open string and keeps unknown fields', () => {
    const doc = JSON.parse(fixture('phux-agent-list-mixed-fleet.json'));
    doc.agents[0].agent.kind = 'cursor_agent';
    doc.agents[0].lease = { holder: 'x' };
    doc.agents[0].agent.color = 'blue';
    doc.generated_by = 'phux 0.30';
    const list = ok(JSON.stringify(doc));
    assert.equal(list.agents[0].agent.kind, 'cursor_agent');
    assert.deepEqual((list.agents[0] as Record<string, unknown>).lease, { holder: 'x' });
    assert.equal((list.agents[0].agent as Record<string, unknown>).color, 'blue');
    assert.equal(list.generated_by, 'phux 0.30');
  });

  it('rejects a state outside unknown|idle|working|blocked|done with the JSON path', () => {
    const doc = JSON.parse(fixture('phux-agent-list-mixed-fleet.json'));
    doc.agents[2].state = 'sleeping';
    const r = parseAgentList(JSON.stringify(doc));
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.cause, 'schema');
    assert.equal(r.issues.length, 1);
    assert.match(r.issues[0], /^\$\.agents\[2\]\.state: /);
  });

  it('rejects an attention level outside none|low|normal|high and a missing explanation', () => {
    const doc = JSON.parse(fixture('phux-agent-list-docs-example.json'));
    doc.agents[0].attention = 'urgent';
    delete doc.agents[0].explanation;
    const r = parseAgentList(JSON.stringify(doc));
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.deepEqual(r.issues.map((i) => i.split(':')[0]).sort(), ['$.agents[0].attention', '$.agents[0].explanation']);
  });

  it('rejects schema_version 2 and non-JSON as schema / json', () => {
    const v2 = parseAgentList('{"schema_version":2,"agents":[]}');
    assert.deepEqual([v2.ok, !v2.ok && v2.cause], [false, 'schema']);
    const bad = parseAgentList('{"schema_version": 1, "agents": [');
    assert.deepEqual([bad.ok, !bad.ok && bad.cause], [false, 'json']);
  });
});
