/**
 * volatile-value is classified from the whole changed token (the changed bytes widened to the
 * enclosing word, path or key=value), not from a fixed window around them: recorded Pi Anthropic
 * bodies #006 → #007 with their system prompt edited the way hosts change it between requests.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

/** Causes of #007 when both system prompts get `edit` applied (with `a` in #006 and `b` in #007). */
async function causes(edit: (text: string, v: string) => string, a: string, b: string): Promise<string[]> {
  const sys = (v: string) => (body: any) => (body.system[0].text = edit(body.system[0].text, v));
  const dir = captureDir(PI_MAIN, [['006-anthropic-messages', sys(a)], ['007-anthropic-messages', sys(b)]]);
  const r = analyzeSession(await readCaptureSession(dir)).requests[1];
  assert.equal(r.break?.segment, 'system');
  return r.causes.map((c) => `${c.kind}: ${c.detail}`);
}
const volatile = (list: string[]) => list.filter((c) => c.startsWith('volatile-value'));

describe('review: volatile values from the whole changed token', () => {
  it('a cwd that changed only in its last path component', async () => {
    const cwd = (t: string, v: string) => t.replace('/home/user/pi-lab/main/project', v);
    // The changed bytes are "2" at the end of the path: no "/home/" within 16 bytes of them.
    assert.deepEqual(volatile(await causes(cwd, '/home/user/pi-lab/main/project', '/home/user/pi-lab/main/project2')), ['volatile-value: cwd in the changed bytes']);
    assert.deepEqual(volatile(await causes(cwd, '/srv/build/agent-17/work', '/srv/build/agent-18/work')), ['volatile-value: cwd in the changed bytes']);
  });

  it('a short numeric nonce such as cch=56445 (Claude Code billing header)', async () => {
    const header = (t: string, v: string) => `x-anthropic-billing-header: cc_version=2.1.37; cc_entrypoint=cli; cch=${v};\n${t}`;
    assert.deepEqual(volatile(await causes(header, '56445', '81234')), ['volatile-value: nonce in the changed bytes']);
  });

  it('a counter that went up', async () => {
    const counter = (t: string, v: string) => `${t}\nTool calls so far: ${v}`;
    assert.deepEqual(volatile(await causes(counter, '12', '13')), ['volatile-value: counter in the changed bytes']);
    assert.deepEqual(volatile(await causes(counter, '99', '100')), ['volatile-value: counter in the changed bytes']);
  });

  it('an edited word is not a volatile value', async () => {
    const rule = (t: string, v: string) => `${t}\nAlways answer ${v}.`;
    assert.deepEqual(await causes(rule, 'briefly', 'tersely'), ['system-changed: block 0, line 55: Always answer tersely.; heading `Lab project` edited']);
  });
});
