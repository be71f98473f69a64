/**
 * OpenCode appends a user message's optional `system` text to the system prompt of the requests
 * of that turn (reference/opencode.md §2.1): reconstructed mode sees that change and the revert
 * after it (the recorded database with one user message's `system` set, as the SDK/HTTP prompt
 * API stores it).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { cleanup, editedDb, openFixture, query, sessionIds, tempDir } from './helpers.js';

describe('OpenCode: a user message with its own system text', () => {
  let dir: string;
  before(() => (dir = tempDir()));
  after(() => cleanup(dir));

  it("turn 3's user message carries system text: its request breaks in the head (certain); the next turn reads the older entry", async () => {
    const { sessions } = sessionIds();
    const db = await openFixture();
    const users = query(db, `SELECT id, data FROM message WHERE session_id = '${sessions.basic}' ORDER BY time_created, id`).filter(
      (m) => JSON.parse(String(m.data)).role === 'user',
    );
    db.close();
    const third = String(users[2].id);
    const file = await editedDb(dir, [`UPDATE message SET data = json_set(data, '$.system', 'Answer in French.') WHERE id = '${third}'`]);
    const s = (await readOpenCode(file)).find((x) => x.id === sessions.basic)!;
    const a = analyzeSession(s);
    assert.deepEqual(a.requests.map((r) => r.verdict), ['cold', 'hit', 'hit', 'break', 'model-switch', 'hit']);
    const r = a.requests[3];
    assert.deepEqual([r.break!.segment, r.matched], ['head', 3]);
    assert.deepEqual(r.causes.map((c) => [c.kind, c.certainty, c.detail]), [['system-changed', 'certain', "this turn's user message carries system text, appended to the system prompt"]]);
    // Turn 5 has no system text again: it continues #3's entry (the head without the text).
    assert.equal(a.requests[5].matched, 3);
    // Unedited, the same session has no head change at all.
    const plain = analyzeSession((await readOpenCode('test/fixtures/opencode')).find((x) => x.id === sessions.basic)!);
    assert.deepEqual(plain.requests.map((x) => x.verdict), ['cold', 'hit', 'hit', 'hit', 'model-switch', 'hit']);
  });
});
