/**
 * `--requests DIR` naming a folder without any `*.body.json` (a wrong folder, another recorder's
 * layout such as `NNN-<kind>.json` + `.raw`): the requests stay reconstructed, and a warning says
 * so, for every host with a wire matcher (it was silent: the report looked like a wire run that
 * matched nothing).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../../../src/core/model.js';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { mainTranscript } from '../claude-code/helpers.js';

const PI = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--/2026-12-01T09-25-41-787Z_01a230ec-991a-7497-9a50-b9f4f6517541.jsonl';
const CODEX = 'test/fixtures/codex/codex/sessions';

describe('--requests naming a folder without captured bodies', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pl-no-bodies-'));
    writeFileSync(join(dir, '001-openai-agent.json'), '{}'); // another layout: not a body file
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const check = (s: Session, requests: number) => {
    assert.equal(s.requests.length, requests, s.id);
    assert.ok(s.requests.every((r) => r.evidence === 'reconstructed'), s.id);
    assert.deepEqual(
      s.diagnostics.filter((d) => d.file === dir).map((d) => [d.line, d.severity, d.message]),
      [[0, 'warning', `no captured request bodies (*.body.json) in ${dir}: the requests are reconstructed from the transcript`]],
    );
  };

  it('Pi, Claude Code, Codex and OpenCode: reconstructed, with one warning naming the folder', async () => {
    check(await readPiSession(PI, { requestsDir: dir }), 8);
    check((await readClaudeSession(mainTranscript('test/fixtures/claude-code'), { requestsDir: dir }))[0], 12);
    const { readdirSync } = await import('node:fs');
    const day = join(CODEX, '2026', readdirSync(join(CODEX, '2026'))[0]);
    const dd = join(day, readdirSync(day)[0]);
    check((await readCodexSession(join(dd, readdirSync(dd).find((f) => f.endsWith('.jsonl'))!), { requestsDir: dir }))[0], 9);
    const oc = await readOpenCode('test/fixtures/opencode', { requestsDir: dir });
    assert.equal(oc.length, 6);
    // The recorded sessions, in the database's order: 6, 5, 1 (the subtask), 9 (compaction), 8 and 5 requests.
    oc.forEach((s, i) => check(s, [6, 5, 1, 9, 8, 5][i]));
  });
});
