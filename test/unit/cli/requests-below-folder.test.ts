import assert from 'node:assert/strict';
import { buildReport } from '../../../src/cli/main.js';

const PROJECTS = 'test/fixtures/claude-code/claude/projects';
const FILE = `${PROJECTS}/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl`;
const BODIES = 'test/fixtures/claude-code/requests';

describe('--requests with a folder that holds the session below it', () => {
  it('finds the Claude Code session two levels down and joins the bodies, as when the file is named', async () => {
    const below = (await buildReport([PROJECTS], BODIES, process.cwd())).report;
    const named = (await buildReport([FILE], BODIES, process.cwd())).report;
    const main = below.sessions.find((s) => s.path.endsWith('8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl'))!;
    assert.ok(main, 'the session is found below the folder (it said "no sessions found")');
    assert.deepEqual([main.requests.length, main.evidence, main.totals.breaks], [13, 'wire', 1]);
    assert.deepEqual(main, named.sessions.find((s) => s.path === main.path));
  });
});
