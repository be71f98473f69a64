/**
 * A message dropped from (or inserted into) the history is named as such, not as an edit of the
 * message that now sits at its index (recorded Pi bodies #007 → #008, messages spliced).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

async function cause(edit: (b: any) => void): Promise<string> {
  const dir = captureDir(PI_MAIN, [['007-anthropic-messages'], ['008-anthropic-messages', edit]]);
  const r = analyzeSession(await readCaptureSession(dir)).requests[1];
  return `${r.causes[0].kind}: ${r.causes[0].detail}`;
}

describe('review: pruned and inserted messages', () => {
  it('message 6 dropped: "message removed at message 6" (was "edit at message 6")', async () => {
    assert.equal(await cause((b) => b.messages.splice(6, 1)), 'history-rewritten: message removed at message 6');
  });

  it('messages 2 and 3 dropped: "2 messages removed at message 2"', async () => {
    assert.equal(await cause((b) => b.messages.splice(2, 2)), 'history-rewritten: 2 messages removed at message 2');
  });

  it('a message inserted before message 6: "message inserted at message 6"', async () => {
    const insert = (b: any) => b.messages.splice(6, 0, { role: 'user', content: [{ type: 'text', text: 'inserted' }] });
    assert.equal(await cause(insert), 'history-rewritten: message inserted at message 6');
  });

  it('an edited message stays an edit', async () => {
    assert.equal(await cause((b) => (b.messages[6].content[0].text = 'Edited.')), 'history-rewritten: edit at message 6');
  });
});
