import assert from 'node:assert/strict';
import { FromWebviewMessageSchema, MessageType, copyPathMessage } from '../../../src/protocol.js';

describe('copyPath message (the Timeline header copy button, src/protocol.ts)', () => {
  it('goes through postMessage and the schema unchanged: type and session index only', () => {
    const sent = copyPathMessage(0);
    const received = FromWebviewMessageSchema.parse(structuredClone(sent));
    assert.deepEqual(received, { type: MessageType.CopyPath, sessionIndex: 0 });
    assert.deepEqual(FromWebviewMessageSchema.parse(JSON.parse(JSON.stringify(copyPathMessage(3)))), { type: 'copyPath', sessionIndex: 3 });
  });

  it('refuses a copyPath that names the text to copy, or a session index that is not one', () => {
    for (const m of [
      { type: 'copyPath', sessionIndex: 0, path: '/etc/passwd' },
      { type: 'copyPath', sessionIndex: 0, text: 'x' },
      { type: 'copyPath' },
      { type: 'copyPath', sessionIndex: -1 },
      { type: 'copyPath', sessionIndex: 0.5 },
      { type: 'copyPath', sessionIndex: '0' },
    ]) {
      assert.equal(FromWebviewMessageSchema.safeParse(m).success, false, JSON.stringify(m));
    }
  });
});
