/**
 * A /tree navigation in Pi to an earlier entry of the same model: Pi keeps its in-memory thinking
 * level over the navigation (agent-session navigateTree replaces only the messages; reference/pi.md
 * "Tree, leaf, branches"), so the request after it goes out with the level of the branch it left,
 * whatever the path says. Built from the recorded pi/main session (test/fixtures/pi/main): lines
 * 1-33 (claude-sonnet-4-5 at thinking high since line 25, the compaction at line 29), then a
 * navigation back to the claude reply of line 20 (path level medium, line 17) and one more turn
 * on claude. The navigation shows in the file: the new user entry's parent is line 20, not the
 * entry before it. The judge compares the request with #8 (line 28, sent with high, the deepest
 * live prefix): it was "params-changed: thinking: high → medium", a level Pi never sent, and
 * "edit at message 12" for the move to another branch.
 */
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { locatePiSessions, readPiSession } from '../../../src/hosts/pi/index.js';
import { PiLiveSession } from '../../../src/hosts/pi/live.js';
import { sessionReport } from '../../../src/report/json.js';
import { cleanup, tempDir } from '../pi/helpers.js';

describe('Pi /tree navigation to an entry of the same model', () => {
  it('the request after it keeps the level Pi held (high), so no thinking change is reported; the next one on the branch too', async () => {
    const [found] = await locatePiSessions({ PI_CODING_AGENT_DIR: 'test/fixtures/pi/main/agent' }, '/nonexistent-home');
    const lines = (await readFile(found.file, 'utf8')).split('\n');
    const at = (n: number) => JSON.parse(lines[n - 1]) as { id: string; message: Record<string, unknown> };
    const claude = at(33).message;
    const turn = (n: number, parent: string, time: string) => [
      JSON.stringify({ type: 'message', id: `u${n}`, parentId: parent, timestamp: `2026-12-01T09:26:${time}.000Z`, message: { role: 'user', content: [{ type: 'text', text: `next ${n}` }], timestamp: Date.parse(`2026-12-01T09:26:${time}.000Z`) } }),
      JSON.stringify({ type: 'message', id: `a${n}`, parentId: `u${n}`, timestamp: `2026-12-01T09:26:${time}.500Z`, message: { ...claude, responseId: `r${n}`, timestamp: Date.parse(`2026-12-01T09:26:${time}.100Z`) } }),
    ];
    const dir = await tempDir();
    try {
      const file = join(dir, 'tree-same-model.jsonl');
      await writeFile(file, [...lines.slice(0, 33), ...turn(1, at(20).id, '13'), ...turn(2, 'a1', '15')].join('\n') + '\n');
      const s = await readPiSession(file);
      // Lines 20, 22, 24 medium; 28, 33 high; the two turns after the navigation high, as Pi sent them (the path says medium).
      assert.deepEqual(s.requests.slice(4).map((r) => [r.source.line, r.params.thinking]), [[20, 'medium'], [22, 'medium'], [24, 'medium'], [28, 'high'], [33, 'high'], [35, 'high'], [37, 'high']]);
      const a = analyzeSession(s).requests;
      const r = a[9];
      assert.deepEqual([r.verdict, r.matched, r.break!.segment, r.break!.blockIndex, r.break!.path], ['break', 8, 'messages', 12, 'messages[12].content[0].text']);
      // The navigation wrote no branch summary: its first message (line 34, appended away from
      // line 33) is the start of the branch (it was "edit at message 12").
      assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty, c.detail]), [['history-rewritten', 'certain', 'branch: the conversation moved to another branch at message 12']]);
      assert.deepEqual([r.expectedRead, r.observedRead, r.lostTokens], [2413, 1531, 882]);
      // The next turn continues the branch at the same level: a continuation of #10, no params change.
      assert.deepEqual([a[10].matched, a[10].causes.filter((c) => c.kind === 'params-changed')], [10, []]);
      // The live tail, grown a line at a time from line 33, says the same at every step.
      const grown = join(dir, 'grown.jsonl');
      const all = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
      await writeFile(grown, all.slice(0, 33).join('\n') + '\n');
      const live = await PiLiveSession.open(grown);
      const report = async (x: Promise<import('../../../src/core/model.js').Session> | import('../../../src/core/model.js').Session) => JSON.stringify(sessionReport(analyzeSession(await x)));
      for (const line of all.slice(33)) {
        await appendFile(grown, line + '\n');
        await live.update();
        assert.equal(await report(live.session()), await report(readPiSession(grown)));
      }
    } finally {
      await cleanup(dir);
    }
  });
});
