/**
 * The warm entry (src/cli/warm.ts, the bin's first bundle): `analyze --json <path>…` answered from
 * the run manifest and the output cache gives the bytes and exit code of a full run, and never
 * answers when anything discovery or the analysis could see changed (a grown, rewritten, added,
 * removed or renamed session, another build, a corrupt or foreign manifest or output entry).
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputFile } from '../../../src/cache/output.js';
import { main } from '../../../src/cli/main.js';
import { manifestFile, treeStamp, warmJson, warmPaths, writeManifest, type RunManifest } from '../../../src/cli/warm.js';

const PI = 'test/fixtures/pi';

describe('warm entry (analyze --json without loading the analysis)', () => {
  let dir: string;
  let cacheDir: string;
  let saved: { cache?: string; state?: string };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-warm-'));
    saved = { cache: process.env.XDG_CACHE_HOME, state: process.env.XDG_STATE_HOME };
    process.env.XDG_CACHE_HOME = join(dir, 'xdg');
    process.env.XDG_STATE_HOME = join(dir, 'state'); // no capture folders
    cacheDir = join(dir, 'xdg/prefix-lens');
    cpSync(PI, join(dir, 'in'), { recursive: true });
  });
  afterEach(() => {
    for (const [k, v] of [['XDG_CACHE_HOME', saved.cache], ['XDG_STATE_HOME', saved.state]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const full = async (...args: string[]) => {
    const out: string[] = [];
    const code = await main(['analyze', '--json', ...args], (s) => out.push(s), () => {}, process.cwd());
    return { code, text: `${out.join('\n')}\n` };
  };
  /** The warm entry's answer as the bin would print it, or null. */
  const warm = async (...args: string[]) => {
    const parts: Buffer[] = [];
    const code = await warmJson(['analyze', ...args], {
      cwd: process.cwd(),
      env: process.env,
      cacheDir,
      sink: { line: (t) => void parts.push(Buffer.from(`${t}\n`)), bytes: (b) => void parts.push(Buffer.from(b)) },
    });
    return code === null ? null : { code, text: Buffer.concat(parts).toString('utf8') };
  };
  /** A manifest file's parts: `<sample bytes><JSON>\n<16-digit length of JSON and newline>\n`. */
  const readParts = (file: string) => {
    const b = readFileSync(file);
    const len = Number(b.subarray(b.length - 17, b.length - 1).toString('latin1'));
    const end = b.length - 17 - len;
    return { json: JSON.parse(b.subarray(end, b.length - 18).toString('utf8')) as RunManifest, bytes: b.subarray(0, end) };
  };
  const writeParts = (file: string, json: unknown, bytes: Uint8Array) => {
    const j = Buffer.from(`${JSON.stringify(json)}\n`);
    writeFileSync(file, Buffer.concat([bytes, j, Buffer.from(`${String(j.length).padStart(16, '0')}\n`)]));
  };
  /** After a full run of `path` the warm entry answers; after each change it misses, and the next full run makes it answer the new bytes. */
  const missesAfterEach = async (path: string, changes: Array<[string, () => void]>) => {
    await full(path);
    assert.ok(await warm('--json', path));
    for (const [what, change] of changes) {
      change();
      assert.equal(await warm('--json', path), null, what);
      const expected = await full('--no-cache', path);
      assert.equal((await full(path)).text, expected.text, what);
      assert.equal((await warm('--json', path))?.text, expected.text, `answers again after ${what}`);
    }
  };
  const sessionFiles = (root: string) =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
      .map((e) => join(e.parentPath, e.name))
      .sort();

  it('answers only analyze --json with paths (no other option, no host: argument, no path)', () => {
    assert.deepEqual(warmPaths(['analyze', '--json', 'a', '/x/b', 'a'], '/w'), ['/w/a', '/x/b']);
    assert.deepEqual(warmPaths(['analyze', 'a', '--json'], '/w'), ['/w/a']);
    assert.equal(warmPaths(['analyze', 'a'], '/w'), null);
    assert.equal(warmPaths(['analyze', '--json'], '/w'), null);
    assert.equal(warmPaths(['analyze', '--json', '--no-cache', 'a'], '/w'), null);
    assert.equal(warmPaths(['analyze', '--json', '--watch', 'a'], '/w'), null);
    assert.equal(warmPaths(['analyze', '--json', 'pi:019a'], '/w'), null);
    assert.equal(warmPaths(['check', '--json', 'a'], '/w'), null);
  });

  it('prints the bytes of a full run (and of a run without cache) for the Pi fixtures, one and several inputs', async () => {
    const inputs = [[join(dir, 'in')], [join(dir, 'in/long'), join(dir, 'in/main')], [sessionFiles(join(dir, 'in'))[0]]];
    for (const args of inputs) {
      assert.equal(await warm('--json', ...args), null, 'no manifest yet');
      const fresh = await full('--no-cache', ...args);
      assert.equal(await warm('--json', ...args), null, '--no-cache writes no manifest');
      const cold = await full(...args);
      assert.equal(cold.text, fresh.text);
      const w = await warm('--json', ...args);
      assert.ok(w, `answered: ${args}`);
      assert.equal(w.code, 0);
      assert.equal(w.text, fresh.text);
      assert.equal(JSON.parse(w.text).sessions.length, args.length === 1 && args[0].endsWith('.jsonl') ? 1 : 2);
    }
  });

  it('answers for Claude Code and Codex sessions as for Pi: the bytes of a full run, and a miss once a session changed', async () => {
    const cc = join(dir, 'cc');
    const cx = join(dir, 'cx');
    cpSync('test/fixtures/claude-code/claude', cc, { recursive: true });
    cpSync('test/fixtures/codex-agents/codex', cx, { recursive: true });
    const transcript = join(cc, 'projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl');
    const rollouts = sessionFiles(cx);
    // The Claude Code session is printed with its sub-agent's; the Codex home holds a parent and its two sub-agents.
    const cases: Array<[string[], string[]]> = [
      [[cc], ['claude-code', 'claude-code']],
      [[transcript], ['claude-code', 'claude-code']],
      [[cx], ['codex', 'codex', 'codex']],
      [[rollouts[1]], ['codex']],
      [[cc, cx], ['claude-code', 'claude-code', 'codex', 'codex', 'codex']],
    ];
    for (const [args, hosts] of cases) {
      const fresh = await full('--no-cache', ...args);
      await full(...args);
      const w = await warm('--json', ...args);
      assert.ok(w, `answered: ${args}`);
      assert.equal(w.text, fresh.text);
      const sessions = JSON.parse(w.text).sessions as Array<{ host: string }>;
      assert.deepEqual(sessions.map((s) => s.host), hosts, String(args));
      appendFileSync(args[0] === cc || args[0] === transcript ? transcript : rollouts[1], '\n');
      assert.equal(await warm('--json', ...args), null, `grown: ${args}`);
    }
  });

  it('misses when a sub-agent file of a Claude Code session changed, was added or removed, also when only the transcript is named', async () => {
    const cc = join(dir, 'cc');
    cpSync('test/fixtures/claude-code/claude', cc, { recursive: true });
    const project = join(cc, 'projects/-tmp-prefix-lens-cc-lab-project');
    const transcript = join(project, '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl');
    const agent = join(project, '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6/subagents/agent-aa4455826cc83258f.jsonl');
    const agentText = readFileSync(agent);
    const changes: Array<[string, () => void]> = [
      ['a sub-agent file grew', () => appendFileSync(agent, '\n')],
      ['a sub-agent file added', () => writeFileSync(join(project, '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6/subagents/agent-b0000000000000000.jsonl'), agentText)],
      ['a sub-agent file removed', () => rmSync(join(project, '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6/subagents/agent-b0000000000000000.jsonl'))],
      ['a flat sub-agent file added beside the session', () => writeFileSync(join(project, 'agent-c0000000000000000.jsonl'), agentText)],
    ];
    await missesAfterEach(transcript, changes);
    // A manifest that says otherwise about how a ref is checked is not ours.
    const file = manifestFile(cacheDir, [transcript]);
    const good = readParts(file);
    const [ref] = good.json.refs;
    assert.equal(typeof ref.stamp, 'string');
    assert.equal(ref.check, undefined);
    assert.equal(good.bytes.length, 0, 'no sample bytes for a stamped ref');
    for (const [what, r] of [
      ['another stamp', { stamp: `${ref.stamp}x` }],
      ['a file check on a stamped ref', { check: { size: 1, mtimeMs: 1, head: '0'.repeat(64), tail: '0'.repeat(64) } }],
      ['a Pi ref with a stamp', { host: 'pi' }],
      ['no stamp', { stamp: undefined }],
    ] as const) {
      writeParts(file, { ...good.json, refs: [{ ...ref, ...r }] }, good.bytes);
      assert.equal(await warm('--json', transcript), null, what);
    }
  });

  it('does not answer once a session grew, was rewritten in place, added, removed or renamed; the next full run makes it answer again', async () => {
    const root = join(dir, 'in');
    const [first, second] = sessionFiles(root);
    const changes: Array<[string, () => void]> = [
      ['grown', () => appendFileSync(first, '\n')],
      [
        'rewritten in place with the same size and mtime',
        () => {
          const text = readFileSync(second, 'utf8');
          const at = text.lastIndexOf('"text":"') + 8;
          writeFileSync(second, `${text.slice(0, at)}${text[at] === 'X' ? 'Y' : 'X'}${text.slice(at + 1)}`);
          utimesSync(second, new Date(1_700_000_000_000), new Date(1_700_000_000_000));
        },
      ],
      ['added', () => cpSync(first, join(root, 'main/added.jsonl'))],
      ['removed', () => rmSync(join(root, 'main/added.jsonl'))],
      ['renamed', () => renameSync(first, `${first.slice(0, -6)}-moved.jsonl`)],
      ['a folder added', () => cpSync(join(root, 'main'), join(root, 'main-copy'), { recursive: true })],
    ];
    // The rewrite below keeps size, mtime and inode: only the content check (tail SHA-256) can tell.
    utimesSync(second, new Date(1_700_000_000_000), new Date(1_700_000_000_000));
    await missesAfterEach(root, changes);
  });

  it('ignores a corrupt, cut or foreign manifest or output entry (a full run rewrites them)', async () => {
    const root = join(dir, 'in/long');
    const expected = await full('--no-cache', root);
    await full(root);
    const file = manifestFile(cacheDir, [root]);
    const good = readParts(file);
    assert.equal(good.json.refs.length, 1);
    const [ref] = good.json.refs;
    // The sample: the session's first and last min(size, 64 KiB) bytes, as the content check hashed them.
    const session = readFileSync(ref.path);
    const n = Math.min(session.length, 64 * 1024);
    assert.equal(ref.check!.size, session.length);
    assert.deepEqual(good.bytes, Buffer.concat([session.subarray(0, n), session.subarray(session.length - n)]));
    const flipped = (at: number) => {
      const b = Buffer.from(good.bytes);
      b[at] ^= 1;
      return b;
    };
    const withRef = (r: object) => ({ ...good.json, refs: [{ ...ref, ...r }] });
    const bad: Array<[string, unknown, Uint8Array]> = [
      ['another build', { ...good.json, code: 'another build' }, good.bytes],
      ['another format', { ...good.json, format: 'something else' }, good.bytes],
      ['the earlier layout', { ...good.json, version: 1 }, good.bytes],
      ['another stamp', { ...good.json, trees: ['0'.repeat(64)] }, good.bytes],
      ['no refs', { ...good.json, refs: [] }, Buffer.alloc(0)],
      ['another host', withRef({ host: 'opencode' }), good.bytes],
      ['other paths', { ...good.json, paths: ['/elsewhere'] }, good.bytes],
      ['an entry name outside the cache folder', withRef({ out: `../${ref.out}` }), good.bytes],
      ['another head hash (not the entry trailer)', withRef({ check: { ...ref.check, head: '0'.repeat(64) } }), good.bytes],
      ['another tail hash (not the entry trailer)', withRef({ check: { ...ref.check, tail: '0'.repeat(64) } }), good.bytes],
      ['another size', withRef({ check: { ...ref.check, size: ref.check!.size - 1 } }), good.bytes.subarray(2)],
      ['another mtime', withRef({ check: { ...ref.check, mtimeMs: ref.check!.mtimeMs + 1 } }), good.bytes],
      ['a head byte changed', good.json, flipped(0)],
      ['a tail byte changed', good.json, flipped(good.bytes.length - 1)],
      ['the sample cut short', good.json, good.bytes.subarray(0, good.bytes.length - 1)],
      ['bytes after the sample', good.json, Buffer.concat([good.bytes, Buffer.from('x')])],
    ];
    const raw: Array<[string, string]> = [
      ['JSON cut short', `{"format":"prefix-lens-run-manifest"\n${String(200).padStart(16, '0')}\n`],
      ['no length field', `${JSON.stringify(good.json)}\n`],
      ['empty', ''],
    ];
    for (const [what, json, bytes] of bad) {
      writeParts(file, json, bytes);
      assert.equal(await warm('--json', root), null, what);
      assert.equal((await full(root)).text, expected.text, what);
      const again = readParts(file);
      assert.deepEqual(again.json, good.json, `rewritten: ${what}`);
      assert.deepEqual(again.bytes, good.bytes, `rewritten: ${what}`);
    }
    for (const [what, text] of raw) {
      writeFileSync(file, text);
      assert.equal(await warm('--json', root), null, what);
      assert.equal((await full(root)).text, expected.text, what);
      assert.deepEqual(readParts(file).json, good.json, `rewritten: ${what}`);
    }
    assert.equal((await warm('--json', root))?.text, expected.text);
    const entry = outputFile(cacheDir, ref.key);
    const text = readFileSync(entry);
    writeFileSync(entry, text.subarray(0, text.length - 3));
    assert.equal(await warm('--json', root), null, 'output entry cut short');
    await full(root);
    assert.equal((await warm('--json', root))?.text, expected.text);
  });

  it('does not answer when the file changed after its output entry was written (the manifest has its new identity, the entry its old one)', async () => {
    const root = join(dir, 'in/long');
    const [session] = sessionFiles(root);
    utimesSync(session, new Date(1_700_000_000_000), new Date(1_700_000_000_000));
    await full(root);
    assert.ok(await warm('--json', root));
    const { json } = readParts(manifestFile(cacheDir, [root]));
    // Rewritten in place (same size, mtime and inode) between the entry's commit and the manifest's write.
    const text = readFileSync(session, 'utf8');
    const at = text.lastIndexOf('"text":"') + 8;
    writeFileSync(session, `${text.slice(0, at)}${text[at] === 'X' ? 'Y' : 'X'}${text.slice(at + 1)}`);
    utimesSync(session, new Date(1_700_000_000_000), new Date(1_700_000_000_000));
    await writeManifest(cacheDir, { rules: json.rules, paths: json.paths, trees: json.trees, refs: json.refs });
    assert.notEqual(readParts(manifestFile(cacheDir, [root])).json.refs[0].check!.tail, json.refs[0].check!.tail, 'the manifest holds the new content');
    assert.equal(await warm('--json', root), null);
    const expected = await full('--no-cache', root);
    assert.equal((await full(root)).text, expected.text);
    assert.equal((await warm('--json', root))?.text, expected.text);
  });

  it('exits 2 warm as cold when nothing could be read', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"type":"session","version":3,"id":"x"\n');
    const cold = await full(bad);
    assert.equal(cold.code, 2);
    const w = await warm('--json', bad);
    assert.equal(w?.code, 2);
    assert.equal(w.text, cold.text);
  });

  it('stamps what is below a path: names, types, sizes, mtimes; not through symbolic links', () => {
    const root = join(dir, 'in');
    const a = treeStamp(root);
    // The stamp itself (no digest): a line per folder (its entry count) and per file (size, mtime, inode).
    const files = (a ?? '').split('\n').filter((l) => l.startsWith('f\0')).map((l) => join(root, l.split('\0')[1]));
    const all = readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    assert.deepEqual(files.sort(), all.sort());
    assert.ok((a ?? '').startsWith(`d\0\0${readdirSync(root).length}\n`));
    assert.equal(treeStamp(root), a);
    writeFileSync(join(root, 'notes.txt'), 'x');
    assert.notEqual(treeStamp(root), a);
    // What discovery never enters is not stamped: a commit in a repository below the path, a symlinked dependency.
    const b = treeStamp(root);
    mkdirSync(join(root, '.git', 'objects'), { recursive: true });
    writeFileSync(join(root, '.git', 'objects', 'ab'), 'x');
    mkdirSync(join(root, 'node_modules'));
    symlinkSync(join(dir, 'in/main'), join(root, 'node_modules', 'dep'));
    assert.equal(treeStamp(root), b);
    assert.equal(treeStamp(join(dir, 'missing')), null);
    symlinkSync(join(dir, 'in/main'), join(root, 'linked'));
    assert.equal(treeStamp(root), null, 'a link could point anywhere: no manifest');
  });

  it('the bin answers a warm run without loading dist/cli-main.js, and loads it for a miss', async function () {
    this.timeout(60_000);
    const { execa } = await import('execa'); // ESM-only package
    const hook = join(dir, 'loaded.cjs');
    // Reports at exit whether the analysis bundle was loaded.
    writeFileSync(hook, "process.on('exit', () => process.stderr.write(Object.keys(require.cache).some((f) => f.endsWith('cli-main.js')) ? 'FULL' : 'WARM'));\n");
    const env = { XDG_CACHE_HOME: join(dir, 'bin-cache'), XDG_STATE_HOME: join(dir, 'state') };
    const root = join(dir, 'in');
    const run = (...extra: string[]) => execa('node', ['--require', hook, 'dist/cli.js', 'analyze', '--json', ...extra, root], { env, reject: false });
    const fresh = await run('--no-cache');
    assert.equal(fresh.stderr, 'FULL');
    const cold = await run();
    assert.equal(cold.stderr, 'FULL');
    const warmRun = await run();
    assert.equal(warmRun.stderr, 'WARM');
    assert.equal(warmRun.exitCode, 0);
    assert.equal(warmRun.stdout, fresh.stdout);
    assert.equal(cold.stdout, fresh.stdout);
    appendFileSync(sessionFiles(root)[0], '\n');
    assert.equal((await run()).stderr, 'FULL');
  });
});
