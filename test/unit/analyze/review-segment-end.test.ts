/**
 * A block removed from (or added at) the end of a segment: the differing blocks are of two
 * segments, and the break belongs to the earlier one (recorded Pi Anthropic bodies, edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

async function second(edit1: (b: any) => void, edit2: (b: any) => void) {
  const dir = captureDir(PI_MAIN, [['006-anthropic-messages', edit1], ['007-anthropic-messages', edit2]]);
  const r = analyzeSession(await readCaptureSession(dir)).requests[1];
  return [r.verdict, r.break!.segment, r.break!.blockIndex, r.causes.map((c) => `${c.kind}: ${c.detail}`), r.break!.path];
}

describe('review: a block removed or added at the end of a segment', () => {
  it('the last tool removed is a tools change at tool 3 (was: system-changed at the system prompt)', async () => {
    // Tools read, bash, edit, write; the request drops `write` (tools[3]), so its first
    // differing block is system[0] against the entry's tools[3].
    // The path names the removed tool (in the entry), not the system block that now follows.
    assert.deepEqual(await second(() => {}, (b) => b.tools.pop()), ['break', 'tools', 3, ['tools-changed: removed write'], 'tools[3]']);
  });

  it('a second system block removed is a system change at block 1 (was: history-rewritten at message 0)', async () => {
    const extra = (b: any) => b.system.push({ type: 'text', text: 'Extra block' });
    assert.deepEqual(await second(extra, () => {}), ['break', 'system', 1, ['system-changed: block 1 removed'], 'system[1]']);
  });

  it('a system block added at the end is a system change at the added block', async () => {
    const extra = (b: any) => b.system.push({ type: 'text', text: 'Extra block' });
    const [verdict, segment, index, causes, path] = await second(() => {}, extra);
    assert.deepEqual([verdict, segment, index, path], ['break', 'system', 1, 'system[1]']);
    assert.match((causes as string[])[0], /^system-changed: block 1 added, line 1: /);
  });

  it('a tool added at the end stays a tools change', async () => {
    const add = (b: any) => b.tools.push({ name: 'grep', description: 'Search', input_schema: { type: 'object' } });
    assert.deepEqual(await second(() => {}, add), ['break', 'tools', 4, ['tools-changed: added grep'], 'tools[4]']);
  });
});
