import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recognizeFile } from '../../../src/hosts/registry.js';

describe('recognizing a transcript an editor opened (never Pi by name alone)', () => {
  it('names the host of every kind of recorded transcript, and nothing for a sub-agent file or a revisions file', async () => {
    const cases: Array<[string, string | null]> = [
      ['test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--/2026-12-01T09-25-42-095Z_01a230ec-9a4e-7417-8af1-68d34234bdc8.jsonl', 'pi'],
      ['test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl', 'claude-code'],
      ['test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6/subagents/agent-aa4455826cc83258f.jsonl', null],
      ['test/fixtures/codex/codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl', 'codex'],
      ['test/fixtures/pi-desktop/home/sessions/7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11.jsonl', 'pi-desktop'],
      ['test/fixtures/pi-desktop/home/sessions/7c1e2f60-5d1a-4c3e-9a0b-2e4f6a8c0d11.revisions.jsonl', null],
      ['test/fixtures/botharness/minimal-preset/session.jsonl', 'botharness'],
    ];
    for (const [file, host] of cases) {
      const refs = await recognizeFile(file);
      assert.deepEqual(refs.map((r) => [r.host, r.path]), host ? [[host, file]] : [], file);
    }
  });

  it('a .jsonl that only looks like one (a "session" first line without Pi header fields, a first line that does not parse or is longer than a peek) or is missing: nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-recognize-'));
    try {
      const file = join(dir, 'events.jsonl');
      writeFileSync(file, '{"type":"session","note":"an event log"}\n{"event":1}\n');
      assert.deepEqual(await recognizeFile(file), []);
      // A walk claims these as damaged Pi sessions (to report them); an editor's .jsonl they are not.
      for (const [name, first] of [['malformed.jsonl', '{"a": 1,,}'], ['long-line.jsonl', JSON.stringify({ text: 'a'.repeat(70_000) })]]) {
        writeFileSync(join(dir, name), `${first}\n{"b":2}\n`);
        assert.deepEqual(await recognizeFile(join(dir, name)), [], name);
      }
      assert.deepEqual(await recognizeFile(join(dir, 'gone.jsonl')), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
