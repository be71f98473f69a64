/**
 * The PI-Desktop reader on the built data dir (test/fixtures/pi-desktop/home): rows, system-row
 * placement, sub-agent rows dropped from the parent, compaction, revisions, pi.sqlite titles and
 * route flags, and bad input with file and line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blocksOf } from '../../../src/core/chain.js';
import { readPiDesktopSession } from '../../../src/hosts/pi-desktop/index.js';
import { ANTHROPIC, MIDCONVO, SETTLE, sessions, transcript } from './helpers.js';

describe('PI-Desktop reader', () => {
  it('"Parser delegation": 10 requests (one summary) on the lines of their assistant rows, and the explorer as a sub-agent session', async () => {
    const [s, sub, ...rest] = await sessions(SETTLE);
    assert.equal(rest.length, 0);
    assert.equal(s.host, 'pi-desktop');
    assert.equal(s.title, 'Parser delegation');
    assert.deepEqual(s.requests.map((r) => [r.source.line, r.kind]), [[4, 'agent'], [9, 'agent'], [13, 'agent'], [15, 'agent'], [18, 'agent'], [22, 'agent'], [25, 'agent'], [26, 'summary'], [28, 'agent'], [30, 'agent']]);
    assert.deepEqual(s.turnLines, [3, 10, 14, 16, 19, 24, 27, 29]);
    assert.deepEqual(s.events, [{ kind: 'compaction', line: 26, timeMs: Date.parse('2026-11-20T09:01:10.000Z') }]);
    assert.deepEqual(s.ignored, { revision: 1, 'subagent-row': 2 });
    assert.deepEqual([sub.id, sub.parentId, sub.requests.map((r) => [r.source.line, r.usage?.uncached])], [`${SETTLE}:explorer:call-task-1`, SETTLE, [[7, 96]]]);
  });

  it('drops the sub-agent rows (lines 6-7) from the parent: #2 extends #1 by the Task call and its result only', async () => {
    const [s] = await sessions(SETTLE);
    const roles = (i: number) => blocksOf(s.requests[i].tail).filter((b) => b.segment === 'messages' && b.path.endsWith('.content[0]') || b.startPath).map((b) => b.role);
    // #1: the user prompt; #2 (mid-conversation chain would add the system delta): + assistant reply, tool call, tool result
    assert.deepEqual(roles(0), ['user']);
    assert.deepEqual(roles(1), ['user', 'assistant', 'assistant', 'toolResult']);
    const text = blocksOf(s.requests[1].tail).map((b) => b.text).join('');
    assert.ok(!text.includes('src/parse.ts holds the parser'), 'the explorer\'s reply is not in the parent');
    assert.ok(text.includes('The parser is in src/parse.ts.'), 'the Task result is');
  });

  it('rebuilds the head from the system rows: the Read tool of the test constants, then Grep after the tool activation', async () => {
    const [s] = await sessions(SETTLE);
    const tools = (i: number) => blocksOf(s.requests[i].tail).filter((b) => b.segment === 'tools').map((b) => (JSON.parse(b.text!) as { function: { name: string } }).function.name);
    assert.deepEqual(tools(0), ['Read']);
    assert.deepEqual(tools(5), ['Read', 'Grep']);
    const system = blocksOf(s.requests[0].tail).find((b) => b.segment === 'system')!;
    assert.deepEqual(system.sections!.map((x) => x.name), ['runtime', 'skills']);
    assert.equal(JSON.parse(system.text!).slice(-13), '\n\nFirst skill');
  });

  it('says which modelSystem placement each file uses (line or meta), and reads both', async () => {
    const a = (await sessions(SETTLE))[0].diagnostics.filter((d) => /modelSystem/.test(d.message));
    const b = (await sessions(MIDCONVO))[0].diagnostics.filter((d) => /modelSystem/.test(d.message));
    assert.deepEqual(a.map((d) => [d.line, d.severity, d.message]), [[2, 'info', 'system rows carry modelSystem on the transcript line (row.modelSystem); the reference leaves the placement unverified, both are accepted']]);
    assert.deepEqual(b.map((d) => [d.line, d.severity, d.message]), [[2, 'info', 'system rows carry modelSystem in meta (row.meta.modelSystem); the reference leaves the placement unverified, both are accepted']]);
    assert.equal((await sessions(MIDCONVO))[0].requests[1].systemDeltas?.[0].id, 'sys-2');
  });

  it('reads pi-ai usage names (meta placement file) and host-core names alike; uncached = input', async () => {
    const [b] = await sessions(MIDCONVO);
    assert.deepEqual(b.requests.map((r) => r.usage), [
      { uncached: 153, cacheRead: 0, cacheWrite: 0, output: 9 },
      { uncached: 164, cacheRead: 128, cacheWrite: 0, output: 9 },
      { uncached: 71, cacheRead: 256, cacheWrite: 0, output: 3 },
    ]);
    const [c] = await sessions(ANTHROPIC);
    assert.deepEqual(c.requests[1].usage, { uncached: 122, cacheRead: 0, cacheWrite: 1520, output: 8 });
  });

  it('takes the route flag from pi.sqlite models (true, false) and says when it is unknown', async () => {
    const shape = async (id: string) => (await sessions(id))[0].requests[0].systemShape!;
    const b = await shape(MIDCONVO);
    const c = await shape(ANTHROPIC);
    const a = await shape(SETTLE);
    assert.deepEqual([b.used, b.known, b.source], ['mid-conversation', true, 'models.compat_json (row deepseek/deepseek-v4-flash)']);
    assert.deepEqual([c.used, c.known, c.source], ['collapsed', true, 'models.compat_json (row anthropic/claude-sonnet-4-5)']);
    assert.deepEqual([a.used, a.known], ['collapsed', false]);
    const [s] = await sessions(SETTLE);
    assert.ok(s.requests[0].notes!.some((n) => /supportsMidConvoSystemMessages is unknown/.test(n)));
    assert.ok(s.diagnostics.some((d) => d.line === 1 && d.message === 'route relay/deepseek-chat: supportsMidConvoSystemMessages unknown (no pi.sqlite models row carries it); requests judged with the collapsed shape'));
  });

  it('counts the archived regenerate row of the revisions file, with its file and line', async () => {
    const [s] = await sessions(SETTLE);
    const d = s.diagnostics.find((x) => x.file.endsWith('.revisions.jsonl'))!;
    assert.deepEqual([d.line, d.severity], [1, 'info']);
    assert.match(d.message, /^1 archived regenerate row/);
  });

  describe('bad input', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'pidesktop-bad-'));
      mkdirSync(join(dir, 'sessions'));
      const good = readFileSync(transcript(SETTLE), 'utf8').split('\n');
      const lines = [
        good[0],
        good[1],
        '{"type":"message","id":"u1","role":"user",',
        good[2],
        JSON.stringify({ type: 'message', id: 'sys-x', role: 'system', blocks: [], modelSystem: { version: 1, messageJson: '{"role":"user"}' } }),
        JSON.stringify({ type: 'message', id: 'sys-y', role: 'system', blocks: [] }),
        JSON.stringify({ type: 'telemetry', at: 1 }),
        JSON.stringify({ type: 'message', id: 7, role: 'user', blocks: [] }),
        good[3],
        '{"type":"message","id":"a9","role":"assi',
      ];
      writeFileSync(join(dir, 'sessions', 'bad.jsonl'), lines.join('\n'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('gives a diagnostic with file and line for each bad row and still reads the rest', async () => {
      const [s] = await readPiDesktopSession(join(dir, 'sessions', 'bad.jsonl'));
      const file = join(dir, 'sessions', 'bad.jsonl');
      const bad = s.diagnostics.filter((d) => d.file === file && d.severity !== 'info');
      assert.deepEqual(bad.map((d) => [d.line, d.severity, d.message.replace(/: .*/, '')]), [
        [3, 'error', 'malformed JSON line skipped'],
        [5, 'error', 'system row sys-x'],
        [6, 'warning', 'system row sys-y has no modelSystem (neither on the line nor in meta); not part of the model context'],
        [8, 'error', 'message row does not fit its schema; skipped'],
        [10, 'warning', 'last line incomplete (PI-Desktop may be writing it); skipped'],
      ]);
      assert.match(bad[1].message, /messageJson is not a pi-ai SystemMessage: role/);
      assert.ok(s.diagnostics.some((d) => d.line === 7 && d.message === 'unknown row type "telemetry" ignored (further ones are counted)'));
      assert.deepEqual(s.requests.map((r) => r.source.line), [9]);
      assert.equal(s.ignored.telemetry, 1);
    });

    it('drops a retried system row (byte-identical messageJson) and places a row whose anchor is missing where it stands', async () => {
      const good = readFileSync(transcript(SETTLE), 'utf8').split('\n');
      const sys2 = JSON.parse(good[7]);
      const lost = { ...sys2, id: 'sys-z', modelSystem: { ...sys2.modelSystem, messageJson: sys2.modelSystem.messageJson.replace('del-1', 'del-2'), afterMessageId: 'nope' } };
      const file = join(dir, 'sessions', 'retry.jsonl');
      writeFileSync(file, [...good.slice(0, 9), good[7], JSON.stringify(lost), ''].join('\n'));
      const [s] = await readPiDesktopSession(file);
      const d = s.diagnostics.filter((x) => x.file === file && (x.line === 10 || x.line === 11));
      assert.deepEqual(d.map((x) => [x.line, x.severity, x.message]), [
        [10, 'info', 'system row sys-2 repeats an earlier system row byte for byte (a retried persist): dropped, as orderSystemRows does'],
        [11, 'warning', 'system row sys-z: afterMessageId nope is not in the context before it; placed where the row stands'],
      ]);
      assert.equal(s.ignored['system:duplicate'], 1);
    });

    it('a pi.sqlite that is not a database: a diagnostic, and the transcript is still read (no title, route unknown)', async () => {
      const data = join(dir, 'garbage');
      mkdirSync(join(data, 'sessions'), { recursive: true });
      writeFileSync(join(data, 'pi.sqlite'), 'not a database at all, just text that is long enough to have a header of a hundred bytes or more...........');
      writeFileSync(join(data, 'sessions', `${MIDCONVO}.jsonl`), readFileSync(transcript(MIDCONVO)));
      const [s] = await readPiDesktopSession(join(data, 'sessions', `${MIDCONVO}.jsonl`));
      assert.deepEqual(s.diagnostics.filter((x) => x.file.endsWith('pi.sqlite')).map((x) => [x.line, x.severity, x.message]), [[0, 'error', 'not an SQLite database (bad header; a half-written or foreign file)']]);
      assert.equal(s.title, undefined);
      assert.deepEqual([s.requests.length, s.requests[0].systemShape!.used, s.requests[0].systemShape!.known], [3, 'collapsed', false]);
    });
  });
});
