/**
 * Claude Code transcript lines repeated or out of file order (a transcript appended to itself, a
 * line written twice with other content, a child before its parent): a repeated entry (same
 * `uuid`, or an `api-request` line's `id`) is a warning at its line and no second request; a line
 * whose parent or request is on a later line is reported; the requests stay the recording's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readClaudeSession } from '../../../src/hosts/claude-code/index.js';
import type { Session } from '../../../src/core/model.js';

const CC = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';

describe('Claude Code: repeated and out-of-order transcript lines', () => {
  let dir: string;
  let lines: string[];
  let intact: Session;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-cc-dup-'));
    lines = readFileSync(CC, 'utf8').split('\n').filter((l) => l !== '');
    intact = (await readClaudeSession(write('intact', lines)))[0];
    assert.equal(intact.requests.length, 12);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function write(name: string, ls: string[]): string {
    const f = join(dir, `${name}.jsonl`);
    writeFileSync(f, ls.join('\n') + '\n');
    return f;
  }
  const hashes = (s: Session) => s.requests.map((r) => r.tail?.shortHash);
  const warnings = (s: Session, re: RegExp) => s.diagnostics.filter((d) => d.severity === 'warning' && re.test(d.message));

  it('the recording: no duplicate and no out-of-order warning', () => {
    assert.deepEqual(warnings(intact, /duplicate entry|out of file order/), []);
  });

  it('appended to itself (lines 2…): the 12 requests of the recording, one warning per repeated entry naming the first line', async () => {
    const s = (await readClaudeSession(write('doubled', [...lines, ...lines.slice(1)])))[0];
    assert.deepEqual(hashes(s), hashes(intact));
    assert.deepEqual(s.diagnostics.filter((d) => /no response recorded/.test(d.message)), []);
    const named = lines.flatMap((l, i) => {
      const o = JSON.parse(l) as { uuid?: unknown; type?: unknown; id?: unknown };
      const name = typeof o.uuid === 'string' ? `uuid ${o.uuid}` : o.type === 'api-request' && typeof o.id === 'string' ? `api-request id ${o.id}` : null;
      return i > 0 && name ? [{ line: lines.length + i, message: `duplicate entry: repeats line ${i + 1} (${name}); skipped` }] : [];
    });
    assert.ok(named.length > 50, `${named.length} named lines repeated`);
    assert.deepEqual(warnings(s, /duplicate entry/).map((d) => ({ line: d.line, message: d.message })), named);
  });

  it('a repeated uuid with other content: said so, the first line kept', async () => {
    const i = lines.findIndex((l) => JSON.parse(l).type === 'user');
    const o = JSON.parse(lines[i]) as { uuid: string; timestamp: string };
    const changed = JSON.stringify({ ...o, timestamp: '2027-01-01T00:00:00.000Z' });
    const s = (await readClaudeSession(write('changed', [...lines.slice(0, i + 1), changed, ...lines.slice(i + 1)])))[0];
    assert.deepEqual(hashes(s), hashes(intact));
    assert.deepEqual(warnings(s, /duplicate entry/).map((d) => [d.line, d.message]), [[i + 2, `duplicate entry: has the name of line ${i + 1} (uuid ${o.uuid}) with other content (that line is kept); skipped`]]);
  });

  it('a child line before its parent: reported at the child, the requests unchanged', async () => {
    const i = lines.findIndex((l, k) => k + 1 < lines.length && typeof JSON.parse(l).uuid === 'string' && JSON.parse(lines[k + 1]).parentUuid === JSON.parse(l).uuid);
    const swapped = [...lines];
    [swapped[i], swapped[i + 1]] = [swapped[i + 1], swapped[i]];
    const s = (await readClaudeSession(write('swapped', swapped)))[0];
    assert.deepEqual(hashes(s), hashes(intact));
    const parent = JSON.parse(lines[i]).uuid as string;
    assert.deepEqual(warnings(s, /out of file order/).map((d) => [d.line, d.message]), [[i + 1, `lines out of file order: parentUuid names line ${i + 2}, after this one (uuid ${parent}); the entry is still read with it`]]);
  });
});
