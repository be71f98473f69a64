import assert from 'node:assert/strict';
import { ROW_NAME_CHARS, rowName } from '../../../src/extension/format.js';

/** The fixture sessions' whole names (titles, else first prompts) as the Sessions view gets them. */
const NAMES = [
  'pi lab session',
  'Hello with long cache retention.',
  'Parser review (Sonnet)',
  'Recorded: Anthropic turn one.',
  'Recorded: Compaction session turn one.',
  'Scripted subtask (@general subagent)',
];

describe("Sessions row names, cut by the row's depth (format.ts rowName)", () => {
  it('cuts at 22 characters right under a host (depth 2) and 14 under a project (depth 3)', () => {
    assert.deepEqual(ROW_NAME_CHARS, { 2: 22, 3: 14 });
  });

  it('depth 2 (Claude Code, Codex, PI-Desktop: one project, no project level): a 22-character name whole, a longer one cut at its last space', () => {
    assert.deepEqual(
      NAMES.map((n) => rowName(n, 2)),
      ['pi lab session', 'Hello with long…', 'Parser review (Sonnet)', 'Recorded: Anthropic…', 'Recorded: Compaction…', 'Scripted subtask…'],
    );
  });

  it('depth 3 (Pi, OpenCode: host → project → session): a 14-character name whole, a longer one cut at its last space in the first 13', () => {
    assert.deepEqual(
      NAMES.map((n) => rowName(n, 3)),
      ['pi lab session', 'Hello with…', 'Parser review…', 'Recorded:…', 'Recorded:…', 'Scripted…'],
    );
  });

  it('cuts mid-word at either depth when the first half holds no space, and never longer than the depth allows', () => {
    assert.equal(rowName('abcdefghijklmnopqrstuvwxyz0123', 2), 'abcdefghijklmnopqrstu…');
    assert.equal(rowName('abcdefghijklmnopqrstuvwxyz0123', 3), 'abcdefghijklm…');
    assert.equal(rowName('[x](command:foo) **b** $(zap) <img src=x>', 3), '[x](command:f…');
    for (const depth of [2, 3] as const) for (const n of NAMES) assert.ok(rowName(n, depth).length <= ROW_NAME_CHARS[depth], `${n} at depth ${depth}`);
  });

  it('puts a name on one line at either depth (a first prompt with line breaks)', () => {
    assert.equal(rowName('Fix the\nparser', 2), 'Fix the parser');
    assert.equal(rowName('Fix the\nparser please', 3), 'Fix the…');
  });
});
