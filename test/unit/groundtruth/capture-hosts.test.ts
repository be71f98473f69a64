/**
 * Ground truth for the capture join on the real Claude Code and Codex, recorded through
 * `prefix-lens capture` in front of the scripted provider (CAPTURE=1 scripts/record/record-claude-codex.sh;
 * CI records them fresh and PREFIX_LENS_FRESH_CAPTURE names the folder; not committed: the
 * committed Pi recording covers the same code, test/unit/groundtruth/pi-capture.test.ts):
 * the bodies the proxy saved are the bytes the provider received, and `analyze` without
 * `--requests` finds them (by the session header both hosts send) and gives the same wire analysis
 * as `--requests` on the provider's recording.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeJson, essence } from './wire-essence.js';

const root = process.env.PREFIX_LENS_FRESH_CAPTURE;
/** Every scenario the recorder wrote with captures (claude-code, claude-code-autocompact, codex, codex-agents). */
const hosts = root ? readdirSync(root).filter((h) => existsSync(join(root, h, 'captures'))).sort() : [];

/** The transcripts of a scenario (Claude Code sub-agents are read with their main session). */
function transcripts(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== 'subagents') walk(join(d, e.name));
      else if (e.name.endsWith('.jsonl')) found.push(join(d, e.name));
    }
  };
  walk(dir);
  return found.sort();
}


for (const host of hosts) {
  describe(`${host} through the capture proxy (fresh recording)`, () => {
    const dir = join(root!, host);
    const caps = join(dir, 'captures');
    const reqs = join(dir, 'requests');
    const files = () => transcripts(join(dir, host.startsWith('codex') ? 'codex/sessions' : 'claude/projects'));

    it('the proxy saved every body the provider received, byte for byte, in the session header’s folder', () => {
      const provider = readdirSync(reqs).filter((f) => f.endsWith('.body.json')).map((f) => readFileSync(join(reqs, f)).toString('base64')).sort();
      const folders = readdirSync(caps);
      assert.deepEqual(folders.map((f) => /^session-/.test(f)), folders.map(() => true), folders.join(' '));
      const saved = folders.flatMap((d) => readdirSync(join(caps, d)).filter((f) => f.endsWith('.body.json')).map((f) => readFileSync(join(caps, d, f)).toString('base64'))).sort();
      assert.deepEqual(saved, provider);
    });

    it('analyze finds the bodies by itself (sub-agents and forks too): the same wire analysis as --requests', async () => {
      assert.ok(files().length >= 1);
      for (const file of files()) {
        const auto = await analyzeJson(['--captures', caps, file]);
        const given = await analyzeJson(['--requests', reqs, file]);
        assert.equal(auto.sessions.length, given.sessions.length, file);
        for (const [i, s] of auto.sessions.entries()) {
          assert.notEqual(s.evidence, 'reconstructed', `${file} ${s.id}`);
          assert.deepEqual(s.requests.map(essence), given.sessions[i].requests.map(essence), `${file} ${s.id}`);
        }
        assert.match(auto.sessions[0].diagnostics.find((d) => d.severity === 'info')!.message, /^capture proxy: \d+ captured request bod(y|ies) joined/);
      }
    });
  });
}
