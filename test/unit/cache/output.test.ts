/**
 * The output cache (src/cache/output.ts): a warm `analyze --json` copies the bytes a cold run
 * printed, and those are the bytes of a fresh analysis; a stale, corrupt or foreign entry is
 * never copied.
 */
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputFile } from '../../../src/cache/output.js';
import { main } from '../../../src/cli/main.js';
import { findSessions } from '../../../src/hosts/registry.js';
import { jsonText, terminalText } from '../../../src/sanitize.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

describe('output cache (--json bytes as printed)', () => {
  let dir: string;
  let saved: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-out-'));
    saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = join(dir, 'xdg');
  });
  afterEach(() => {
    process.env.XDG_CACHE_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['analyze', '--json', ...args], (s) => out.push(s), (s) => err.push(s), process.cwd());
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const outFiles = () => {
    try {
      return readdirSync(join(dir, 'xdg/prefix-lens/v2')).filter((f) => f.endsWith('.out'));
    } catch {
      return [];
    }
  };

  it('a warm run prints the bytes of a run without cache, for every fixture of every host', async function () {
    this.timeout(60_000);
    const fresh = await run('--no-cache', 'test/fixtures');
    assert.equal(fresh.code, 0, fresh.err);
    assert.equal(JSON.parse(fresh.out).sessions.length, 31);
    assert.equal(outFiles().length, 0, '--no-cache writes nothing');
    const cold = await run('test/fixtures');
    const files = outFiles();
    // One entry per ref: 2 DSH logs, 2 Claude Code files (one with its session and a sub-agent's;
    // the auto-compaction recording), 4 Codex rollouts (main; parent, sub-agent, fork), 6 OpenCode
    // sessions (one database) and 6 recorded through the capture proxy (another), 2 Pi, 2 Pi
    // recorded through the capture proxy, 3 PI-Desktop transcripts (each with its sub-agent).
    assert.equal(files.length, 27);
    const warm = await run('test/fixtures');
    assert.equal(cold.out, fresh.out);
    assert.equal(warm.out, fresh.out);
    // Two inputs: sessions separated as in one document.
    const two = await run('--no-cache', LONG, 'test/fixtures/pi/main');
    assert.equal((await run(LONG, 'test/fixtures/pi/main')).out, two.out);
  });

  it('a --json run stores each report once (the output entry); text mode and --html read them from it as from a fresh analysis', async function () {
    this.timeout(60_000);
    const text = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['analyze', ...args], (s) => out.push(s), (s) => err.push(s), process.cwd());
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const resultFiles = () => readdirSync(join(dir, 'xdg/prefix-lens/v2')).filter((f) => f.endsWith('.json'));
    const freshText = await text('--no-cache', 'test/fixtures');
    const freshHtml = await text('--no-cache', '--html', '-', 'test/fixtures');
    assert.equal((await run('test/fixtures')).code, 0);
    assert.equal(outFiles().length, 27);
    assert.deepEqual(resultFiles(), [], 'no result entry besides the output entries');
    // Every ref is a hit from its output entry: nothing analyzed, so nothing stored.
    const warmText = await text('test/fixtures');
    assert.equal(warmText.out, freshText.out);
    assert.equal(warmText.code, freshText.code);
    assert.equal((await text('--html', '-', 'test/fixtures')).out, freshHtml.out);
    assert.deepEqual(resultFiles(), []);
    // A stale output entry is not read: the grown file is analyzed (and, in text mode, stored as a result entry).
    const file = join(dir, 'session.jsonl');
    copyFileSync(join(LONG, readdirSync(LONG)[0]), file);
    await run(file);
    assert.deepEqual(resultFiles(), []);
    appendFileSync(file, '{"type":"custom","customType":"note","data":{},"id":"ffff0002","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n');
    const grown = await text(file);
    assert.equal(grown.out, (await text('--no-cache', file)).out);
    assert.equal(resultFiles().length, 1);
  });

  it('a grown file is analyzed again (its new request printed) and its entry rewritten', async () => {
    const file = join(dir, 'session.jsonl');
    copyFileSync(join(LONG, readdirSync(LONG)[0]), file);
    await run(file);
    const entry = outputFile(join(dir, 'xdg/prefix-lens'), (await findSessions(file))[0].key);
    const first = readFileSync(entry);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const copy = JSON.parse(lines.filter((l) => l.includes('"role":"assistant"')).pop()!) as { id: string; parentId: string };
    copy.parentId = copy.id;
    copy.id = 'ffff0001';
    appendFileSync(file, `${JSON.stringify(copy)}\n`);
    const grown = await run(file);
    assert.equal(JSON.parse(grown.out).sessions[0].requests.length, 9);
    assert.equal(grown.out, (await run('--no-cache', file)).out);
    assert.notDeepEqual(readFileSync(entry), first);
    assert.equal((await run(file)).out, grown.out);
  });

  it('a cut, corrupt or foreign entry is ignored and rewritten', async () => {
    const file = join(dir, 'session.jsonl');
    copyFileSync(join(LONG, readdirSync(LONG)[0]), file);
    const expected = (await run('--no-cache', file)).out;
    await run(file);
    const entry = outputFile(join(dir, 'xdg/prefix-lens'), (await findSessions(file))[0].key);
    const good = readFileSync(entry);
    const text = good.toString('utf8');
    const trailerAt = text.lastIndexOf('\n', text.length - 19) + 1;
    const trailer = JSON.parse(text.slice(trailerAt, text.length - 18)) as Record<string, unknown>;
    const withTrailer = (body: string, t: unknown) => {
      const json = `${JSON.stringify(t)}\n`;
      return `${body}${json}${String(Buffer.byteLength(json)).padStart(16, '0')}\n`;
    };
    const body = text.slice(0, trailerAt);
    const bad = [
      good.subarray(0, good.length - 5), // cut short
      Buffer.from(text.replace('"verdict"', '"verdicT"').slice(0, -1)), // length field broken
      Buffer.from(withTrailer(body.slice(1), trailer)), // block sizes do not add up
      Buffer.from(withTrailer(body, { ...trailer, key: '/somewhere/else.jsonl' })), // foreign
      Buffer.from(withTrailer(body, { ...trailer, code: 'another build' })), // another build
      Buffer.from('{"format":"prefix-lens-result-cache"'), // garbage
    ];
    for (const b of bad) {
      writeFileSync(entry, b);
      const r = await run(file);
      assert.equal(r.code, 0);
      assert.equal(r.out, expected);
      assert.deepEqual(readFileSync(entry), good, 'rewritten');
    }
  });

  it('an unreadable session exits 2 warm as cold', async () => {
    const d = join(dir, 'in');
    cpSync('test/fixtures/pi/main', join(d, 'main'), { recursive: true });
    const bad = join(d, 'bad.jsonl');
    writeFileSync(bad, '{"type":"session","version":3,"id":"x"\n');
    const cold = await run(bad);
    const warm = await run(bad);
    assert.equal(cold.code, 2);
    assert.equal(warm.code, 2);
    assert.equal(warm.out, cold.out);
  });

  it('--json text needs no terminal sanitizing (so the cached bytes are what a terminal gets)', () => {
    const hostile = { s: 'a\u001b[31m\tb\u0007\u009b\u2028\u202e\u2066\u007f\r\n', k: { '\u001b': ['\u0000'] } };
    const text = jsonText(JSON.stringify(hostile, null, 2));
    assert.equal(terminalText(text), text);
    assert.deepEqual(JSON.parse(text), hostile);
  });
});
