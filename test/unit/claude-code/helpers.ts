/** Shared helpers for the Claude Code tests. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The one main transcript of a recording (`<dir>/claude/projects/<project>/<session>.jsonl`). */
export function mainTranscript(dir: string): string {
  const projects = join(dir, 'claude', 'projects');
  const [project] = readdirSync(projects);
  const files = readdirSync(join(projects, project)).filter((f) => f.endsWith('.jsonl'));
  assert.equal(files.length, 1, `one main transcript in ${project}`);
  return join(projects, project, files[0]);
}
