/**
 * Hostile corpus: captured request bodies and metas (`--requests DIR`, capture folders). A body
 * nested deeper than 512 levels is cut there with a warning (no stack overflow); a UTF-8 BOM is
 * read as in a JSONL file; a body that is not a request (not an object, no `messages`, a `model`
 * that is not a string) is named; a meta's unusable values are dropped with one warning; and each
 * problem is reported once, not once per session read with the folder.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './harness.js';

type Diag = { file: string; line: number; severity: string; message: string };

async function diagnostics(args: string[]): Promise<Diag[]> {
  const r = await runCli(['analyze', '--json', '--no-cache', ...args]);
  assert.ok(r.code === 0 || r.code === 1, r.err);
  return (JSON.parse(r.out) as { sessions: Array<{ diagnostics: Diag[] }> }).sessions.flatMap((s) => s.diagnostics);
}

describe('hostile corpus: captured request bodies and metas', () => {
  let dir: string;
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  before(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'prefix-lens-bodies-')), 'requests');
    cpSync('test/fixtures/opencode/requests', dir, { recursive: true });
    const good = readFileSync(join(dir, '002-agent.body.json'));
    writeFileSync(join(dir, '901-agent.body.json'), deep(200_000));
    writeFileSync(join(dir, '902-agent.body.json'), `{"model":"m","messages":[{"role":"user","content":${deep(200_000)}}]}`);
    writeFileSync(join(dir, '903-agent.body.json'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), good]));
    writeFileSync(join(dir, '904-agent.body.json'), good);
    writeFileSync(join(dir, '904-agent.meta.json'), '{"receivedAt":"garbage","usage":{"input_tokens":-5},"status":"x","kind":"weird","responseStartedAt":1e999}');
    writeFileSync(join(dir, '905-agent.body.json'), '{}');
    writeFileSync(join(dir, '906-agent.body.json'), 'null');
    writeFileSync(join(dir, '907-agent.body.json'), '{"messages":"x","model":5}');
  });

  const cutMessage = (path: string) => `value nested deeper than 512 levels at ${path} replaced by a placeholder; the rest is read, but bytes built from it are not the host's (the body is re-encoded)`;
  const expected = (errorPrefix: string): Array<[string, string, string]> => [
    ['901-agent.body.json', 'error', 'request body is an array, not a JSON object; skipped'],
    ['902-agent.body.json', 'warning', cutMessage(`$.messages[0].content${'[0]'.repeat(3)}…${'[0]'.repeat(6)}`)],
    [
      '904-agent.meta.json',
      'warning',
      'meta values ignored (unknown): receivedAt "garbage" is not a time; responseStartedAt Infinity is not a time; status "x" is not an HTTP status; kind "weird" is not agent, title or summary; usage.input_tokens -5 is not a token count (a non-negative integer ≤ 1000000000000)',
    ],
    ['905-agent.body.json', 'warning', "request body's `messages` is absent, not an array: no message blocks"],
    ['905-agent.body.json', 'warning', "request body's `model` is absent, not a string"],
    ['906-agent.body.json', 'error', `${errorPrefix}request body is null, not a JSON object; skipped`],
    ['907-agent.body.json', 'warning', "request body's `messages` is a string, not an array: no message blocks"],
    ['907-agent.body.json', 'warning', "request body's `model` is a number, not a string"],
  ];

  /** The diagnostics of the 9xx files, as [name, severity, message], in order. */
  const mine = (ds: Diag[]) =>
    ds
      .filter((d) => /\/9\d\d-agent\.(body|meta)\.json$/.test(d.file))
      .map((d): [string, string, string] => {
        assert.equal(d.line, 1);
        return [d.file.slice(d.file.lastIndexOf('/') + 1), d.severity, d.message];
      });

  it('OpenCode --requests: each problem once (4 sessions read), the BOM body read', async () => {
    const ds = await diagnostics(['--requests', dir, 'test/fixtures/opencode/opencode.db']);
    assert.deepEqual(mine(ds), expected(''));
  });

  it('the folder as a capture session: the same problems', async () => {
    const ds = await diagnostics([dir]);
    assert.deepEqual(mine(ds), expected(''));
  });
});
