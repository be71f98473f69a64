/**
 * Naming the section of a system change (core/sections.ts), for every host in wire mode: the
 * recorded system blocks where a system prompt changes (Pi AGENTS.md edit, OpenCode phux delta,
 * Claude Code billing header), and recorded Pi Anthropic bodies #006 → #007 with their system
 * prompt edited the way hosts change it (an element's value, a section appended, a line removed).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSession, type SessionAnalysis } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { findSessions, openRef } from '../../../src/hosts/registry.js';
import { sessionReport } from '../../../src/report/json.js';
import { captureDir, PI_MAIN } from '../analyze/review-helpers.js';

/** The system change of #007 when both system prompts get `edit` applied. */
async function change(edit: (text: string, v: string) => string, a: string, b: string) {
  const sys = (v: string) => (body: any) => (body.system[0].text = edit(body.system[0].text, v));
  const dir = captureDir(PI_MAIN, [['006-anthropic-messages', sys(a)], ['007-anthropic-messages', sys(b)]]);
  const r = analyzeSession(await readCaptureSession(dir)).requests[1];
  assert.equal(r.break?.segment, 'system');
  return { c: r.systemChange!, detail: r.causes[0].detail, offset: r.break!.byteOffset };
}

describe('system section of a break, on recorded wire requests', () => {
  it('Pi long (wire) #4: the AGENTS.md edit appends text under the heading `Lab project` at body byte 3316', async () => {
    const base = 'test/fixtures/pi/long/agent/sessions';
    const sub = readdirSync(base)[0];
    const file = join(base, sub, readdirSync(join(base, sub)).find((f) => f.endsWith('.jsonl'))!);
    const a = analyzeSession(await readPiSession(file, { requestsDir: 'test/fixtures/pi/long/requests' }));
    const r = a.requests[3];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.byteOffset], ['system', 0, 3316]);
    assert.deepEqual(r.systemChange, { section: 'Lab project', via: 'heading', within: [], change: 'appended', wholeSection: false, removedBytes: 0, addedBytes: 45 });
    assert.equal(r.causes[0].detail, 'block 0, line 38: Edited line: the system prompt changes now.; text appended to heading `Lab project`');
    // In the view model, on the break.
    assert.deepEqual(sessionReport(a).requests[3].break!.section, { name: 'Lab project', via: 'heading', within: [], change: 'appended', whole: false, removedBytes: 0, addedBytes: 45 });
  });

  it('OpenCode phux V2 (wire) #5: the fleet delta edits the element <phux-context> of system[1] at body byte 10808', async () => {
    const ss = await readOpenCode('test/fixtures/opencode', { requestsDir: 'test/fixtures/opencode/requests' });
    const s = ss.find((x) => x.title === 'Recorded: Phux v2 turn one.')!;
    const r = analyzeSession(s).requests[4];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.byteOffset], ['system', 1, 10808]);
    assert.deepEqual(r.systemChange, { section: 'phux-context', via: 'tag', within: [], change: 'edited', wholeSection: false, removedBytes: 1284, addedBytes: 627 });
    assert.match(r.causes[0].detail, /; element `<phux-context>` edited$/);
  });

  it('Claude Code #9 (system as recorded): the billing header line after /compact is the key `x-anthropic-billing-header`, edited', async () => {
    const [ref] = await findSessions('test/fixtures/claude-code');
    const [s] = await openRef(ref);
    const r = analyzeSession(s).requests[8];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex, r.break!.path, r.break!.byteOffset], ['system', 0, 'system[0].text', 47322]);
    assert.deepEqual(r.systemChange, { section: 'x-anthropic-billing-header', via: 'key', within: [], change: 'edited', wholeSection: false, removedBytes: 3, addedBytes: 3 });
  });

  it('an element value changed inside a heading: <env>, within `Lab project`', async () => {
    const env = (t: string, v: string) => `${t}\n<env>\nbranch: ${v}\n</env>`;
    const { c, detail } = await change(env, 'main', 'feature');
    assert.deepEqual([c.section, c.via, c.within, c.change, c.removedBytes, c.addedBytes], ['env', 'tag', ['Lab project'], 'edited', 4, 7]);
    assert.match(detail, /; element `<env>` edited \(in Lab project\)$/);
  });

  it('a markdown section appended at the end: heading `Skills` added', async () => {
    const skills = (t: string, v: string) => (v ? `${t}\n\n## Skills\nUse the pdf skill for PDFs.` : t);
    const { c, detail } = await change(skills, '', 'x');
    assert.deepEqual([c.section, c.via, c.change, c.wholeSection, c.removedBytes, c.addedBytes], ['Skills', 'heading', 'appended', true, 0, 42]);
    assert.match(detail, /; heading `Skills` added$/);
  });

  it('a line removed before the nested heading: text removed from `Project Context`', async () => {
    const drop = (t: string, v: string) => (v ? t.replace('Project-specific instructions and guidelines:\n', '') : t);
    const { c, detail } = await change(drop, '', 'x');
    assert.deepEqual([c.section, c.via, c.within, c.change, c.wholeSection, c.removedBytes, c.addedBytes], ['Project Context', 'heading', [], 'removed', false, 47, 0]);
    assert.match(detail, /; text removed from heading `Project Context`$/);
  });
});
