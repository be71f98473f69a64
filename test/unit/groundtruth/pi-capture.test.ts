/**
 * Ground truth for the capture proxy and the capture join, on the real Pi recorded through
 * `prefix-lens capture` in front of the scripted provider (test/fixtures/pi-capture, recorded by
 * `npm run record:pi-capture`; CI records it fresh and PREFIX_LENS_FRESH_PI_CAPTURE names it):
 *  - the proxy saved every body the provider received, byte for byte, and nothing else;
 *  - `analyze` finds a session's bodies in the capture folders by itself (no `--requests`) and gives
 *    the same wire-mode analysis as with `--requests` on the provider's own recording;
 *  - two sessions' captures in one folder do not mix; a request whose body is missing stays
 *    reconstructed and says so.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.js';
import type { Report, RequestReport } from '../../../src/report/json.js';

function scenarios(): Array<{ name: string; scenario: string; dir: string }> {
  const roots = [['committed', 'test/fixtures/pi-capture']];
  if (process.env.PREFIX_LENS_FRESH_PI_CAPTURE) roots.push(['fresh', process.env.PREFIX_LENS_FRESH_PI_CAPTURE]);
  const out: Array<{ name: string; scenario: string; dir: string }> = [];
  for (const [label, root] of roots) for (const s of ['main', 'long']) if (existsSync(join(root, s, 'captures'))) out.push({ name: `${label} ${s}`, scenario: s, dir: join(root, s) });
  return out;
}

function sessionFile(dir: string): string {
  const base = join(dir, 'agent', 'sessions');
  const sub = readdirSync(base)[0];
  return join(base, sub, readdirSync(join(base, sub)).find((f) => f.endsWith('.jsonl'))!);
}

/** Captured body files below a capture root (`<folder>/<file>`). */
function capturedBodies(root: string): string[] {
  return readdirSync(root).flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith('.body.json')).map((f) => join(d, f))).sort();
}

async function analyzeJson(args: string[]): Promise<Report> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['analyze', '--json', '--no-cache', ...args], (s) => out.push(s), (s) => err.push(s));
  assert.equal(code, 0, err.join('\n'));
  return JSON.parse(out.join('\n')) as Report;
}

/** What must agree between the two modes (file names of the bodies differ by construction). */
const essence = (r: RequestReport) => ({
  index: r.index,
  kind: r.kind,
  model: r.model,
  evidence: r.evidence,
  usage: r.usage,
  prefixHash: r.prefixHash,
  segments: r.segments,
  verdict: r.verdict,
  causes: r.causes.map((c) => c.kind),
  break: r.break && { segment: r.break.segment, blockIndex: r.break.blockIndex, path: r.break.path, byteOffset: r.break.byteOffset },
  costUSD: r.costUSD,
  matched: r.matched,
  line: r.line,
});

/** The recorder's ground truth: verdict per request (`s:` = summary), wire mode. */
const VERDICTS: Record<string, string[]> = {
  main: ['cold', 'hit', 'hit', 'hit', 'model-switch', 'hit', 'hit', 'hit', 's:below-minimum', 's:below-minimum', 'break', 's:cold', 'break', 'model-switch', 'hit', 'break'],
};

for (const sc of scenarios()) {
  describe(`Pi through the capture proxy (${sc.name})`, () => {
    const caps = join(sc.dir, 'captures');
    const reqs = join(sc.dir, 'requests');

    it('the proxy saved every body the provider received, byte for byte, and no other', () => {
      const provider = readdirSync(reqs).filter((f) => f.endsWith('.body.json')).map((f) => readFileSync(join(reqs, f)).toString('base64')).sort();
      const saved = capturedBodies(caps).map((f) => readFileSync(join(caps, f)).toString('base64')).sort();
      assert.equal(saved.length, provider.length);
      assert.deepEqual(saved, provider);
      // Pi sends a session header (session_id) on OpenAI Responses only: those bodies sit in the session's folder.
      const folders = [...new Set(capturedBodies(caps).map((f) => f.split('/')[0]))].sort();
      assert.ok(folders.every((f) => /^(\d{4}-\d\d-\d\d|session-[0-9a-f-]{36})$/.test(f)), folders.join(' '));
    });

    it('analyze finds the bodies by itself: the same wire analysis as --requests on the provider’s recording', async () => {
      const file = sessionFile(sc.dir);
      const auto = (await analyzeJson(['--captures', caps, file])).sessions[0];
      const given = (await analyzeJson(['--requests', reqs, file])).sessions[0];
      assert.equal(auto.evidence, 'wire');
      assert.equal(auto.requests.length, readdirSync(reqs).filter((f) => f.endsWith('.body.json')).length);
      assert.deepEqual(auto.requests.map(essence), given.requests.map(essence));
      assert.deepEqual(auto.totals, given.totals);
      const info = auto.diagnostics.filter((d) => d.severity === 'info');
      assert.deepEqual(info.map((d) => d.message), [`capture proxy: ${auto.requests.length} captured request bodies joined (${auto.requests.length} requests with wire evidence)`]);
      if (VERDICTS[sc.scenario]) assert.deepEqual(auto.requests.map((r) => `${r.kind === 'agent' ? '' : 's:'}${r.verdict}`), VERDICTS[sc.scenario]);
    });

    it('without captures (an empty capture folder) the session is reconstructed, as before', async () => {
      const empty = mkdtempSync(join(tmpdir(), 'prefix-lens-nocap-'));
      const s = (await analyzeJson(['--captures', empty, sessionFile(sc.dir)])).sessions[0];
      assert.equal(s.evidence, 'reconstructed');
      assert.equal(s.diagnostics.filter((d) => d.severity === 'info').length, 0);
    });

    it('a request whose body was not captured stays reconstructed and says so', async () => {
      const root = mkdtempSync(join(tmpdir(), 'prefix-lens-partial-'));
      const all = capturedBodies(caps);
      // Drop the body of the first agent request after the first one (its meta goes with it).
      const dropped = all.filter((f) => /^\d{4}-/.test(f)).sort()[1];
      for (const f of all) {
        if (f === dropped) continue;
        mkdirSync(join(root, f.split('/')[0]), { recursive: true });
        copyFileSync(join(caps, f), join(root, f));
        copyFileSync(join(caps, f.replace('.body.', '.meta.')), join(root, f.replace('.body.', '.meta.')));
      }
      const s = (await analyzeJson(['--captures', root, sessionFile(sc.dir)])).sessions[0];
      assert.equal(s.evidence, 'mixed');
      const recon = s.requests.filter((r) => r.evidence === 'reconstructed');
      assert.equal(recon.length, 1);
      assert.ok(recon[0].notes.includes('no captured body: reconstructed from the session'), recon[0].notes.join('; '));
      assert.equal(s.requests.length, all.length);
    });
  });
}

describe('capture join: two Pi sessions captured into one folder', () => {
  it('each session takes only its own bodies (main and long were recorded at the same time)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'prefix-lens-shared-'));
    const dirs = ['main', 'long'].map((s) => join('test/fixtures/pi-capture', s));
    // One day folder for both: long's numbers shifted past main's, as one proxy would number them.
    for (const [k, dir] of dirs.entries()) {
      const caps = join(dir, 'captures');
      for (const f of capturedBodies(caps)) {
        const [folder, name] = f.split('/');
        const renamed = k === 0 ? name : name.replace(/^(\d+)/, (n) => String(Number(n) + 500).padStart(6, '0'));
        mkdirSync(join(root, folder), { recursive: true });
        copyFileSync(join(caps, f), join(root, folder, renamed));
        // Each scenario had its own scripted provider, numbering its response ids from 1; one real
        // provider never repeats an id: long's ids get a prefix, so only content can tell them apart.
        const meta = JSON.parse(readFileSync(join(caps, f.replace('.body.', '.meta.')), 'utf8')) as { responseId: string | null };
        if (k === 1 && meta.responseId) meta.responseId = `long-${meta.responseId}`;
        writeFileSync(join(root, folder, renamed.replace('.body.', '.meta.')), JSON.stringify(meta));
      }
    }
    // long's session with the same ids as its metas (the session file's name and cwd are kept).
    const longFile = sessionFile(dirs[1]);
    const longCopy = join(mkdtempSync(join(tmpdir(), 'prefix-lens-long-')), longFile.split('/').pop()!);
    writeFileSync(longCopy, readFileSync(longFile, 'utf8').replaceAll('"responseId":"', '"responseId":"long-'));
    for (const [dir, file] of [[dirs[0], sessionFile(dirs[0])], [dirs[1], longCopy]]) {
      const shared = (await analyzeJson(['--captures', root, file])).sessions[0];
      const alone = (await analyzeJson(['--requests', join(dir, 'requests'), sessionFile(dir)])).sessions[0];
      assert.equal(shared.evidence, 'wire', dir);
      assert.equal(shared.requests.length, capturedBodies(join(dir, 'captures')).length, dir);
      assert.deepEqual(shared.requests.map(essence), alone.requests.map(essence), dir);
    }
  });
});
