/**
 * Tools changed in two ways at once: each tool gets its own description (recorded Pi OpenAI
 * bodies #002 → #003, tools edited).
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { captureDir, PI_MAIN } from './review-helpers.js';

describe('review: tools re-keyed and edited in one request', () => {
  it('bash re-keyed (the break) and edit re-described: key order only in bash; schema bytes of edit', async () => {
    const dir = captureDir(PI_MAIN, [
      ['002-openai-completions'],
      [
        '003-openai-completions',
        (b) => {
          const f = b.tools[1].function;
          b.tools[1].function = { description: f.description, name: f.name, parameters: f.parameters, strict: f.strict };
          b.tools[2].function.description += ' (changed)';
        },
      ],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex], ['tools', 1]);
    // Was 'schema bytes of bash, edit': one real edit made every changed tool a schema change.
    assert.deepEqual(r.causes.map((c) => `${c.kind}: ${c.detail}`), ['tools-changed: key order only in bash; schema bytes of edit']);
  });
});

describe('review: a tools reorder with an edit in the same request', () => {
  it('write and edit swapped, read re-described: the reorder and the schema change both named (was: the reorder only)', async () => {
    const dir = captureDir(PI_MAIN, [
      ['002-openai-completions'],
      [
        '003-openai-completions',
        (b) => {
          [b.tools[2], b.tools[3]] = [b.tools[3], b.tools[2]];
          b.tools[0].function.description += ' (changed)';
        },
      ],
    ]);
    const r = analyzeSession(await readCaptureSession(dir)).requests[1];
    assert.deepEqual([r.break!.segment, r.break!.blockIndex], ['tools', 0]);
    assert.deepEqual(r.causes.map((c) => `${c.kind}: ${c.detail}`), ['tools-changed: reordered: read, bash, edit, write → read, bash, write, edit; schema bytes of read']);
  });
});
