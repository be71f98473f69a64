/**
 * A folder of captured request bodies analyzed on its own (no transcript): the recorded Pi main
 * scenario's bodies give the same verdicts and token sums as the Pi reader in wire mode.
 */
import assert from 'node:assert/strict';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';

describe('capture folder reader', () => {
  it('Pi main bodies: 16 wire requests, the summaries recognized, same totals as the Pi reader', async () => {
    const a = analyzeSession(await readCaptureSession('test/fixtures/pi/main/requests'));
    assert.equal(a.session.host, 'capture');
    assert.deepEqual(
      a.requests.map((r) => `${r.request.kind === 'agent' ? '' : 's:'}${r.verdict}`),
      ['cold', 'hit', 'hit', 'hit', 'model-switch', 'hit', 'hit', 'hit', 's:below-minimum', 's:below-minimum', 'break', 's:cold', 'break', 'model-switch', 'hit', 'break'],
    );
    const t = a.totals;
    assert.deepEqual([t.uncached, t.cacheRead, t.cacheWrite, t.output, t.lostTokens], [6747, 19124, 6765, 349, 0]);
    assert.deepEqual(
      a.requests.filter((r) => r.break && r.request.kind === 'agent').map((r) => [r.request.index, r.break!.path, r.break!.byteOffset]),
      [
        [11, 'messages[0].content[0].text', 90],
        [13, 'messages[2].content[0].text', 249],
        [16, 'messages[3].content[0].text', 3456],
      ],
    );
  });

  it('OpenCode bodies: kinds from the recorder meta (title, agent, summary)', async () => {
    const s = await readCaptureSession('test/fixtures/opencode/requests');
    assert.equal(s.requests.map((r) => r.kind[0]).join(''), 'taaaaaataaaaaataaaasaataaaaasaataaaaasa');
  });

  it('a body that is not JSON is a diagnostic naming the file; the rest is read', async () => {
    const { mkdtempSync, writeFileSync, copyFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-capture-'));
    copyFileSync('test/fixtures/pi/main/requests/001-openai-completions.body.json', join(dir, '001-a.body.json'));
    writeFileSync(join(dir, '002-b.body.json'), '{"model":');
    const s = await readCaptureSession(dir);
    assert.equal(s.requests.length, 1);
    assert.equal(s.diagnostics.length, 1);
    assert.equal(s.diagnostics[0].file, join(dir, '002-b.body.json'));
    assert.match(s.diagnostics[0].message, /^not a request body: /);
  });

  it('a meta file that is not JSON is a warning naming it; its body is still read, without time and usage', async () => {
    const { mkdtempSync, writeFileSync, copyFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-capture-'));
    try {
      copyFileSync('test/fixtures/pi/main/requests/001-openai-completions.body.json', join(dir, '001-a.body.json'));
      writeFileSync(join(dir, '001-a.meta.json'), '{"receivedAt":');
      const s = await readCaptureSession(dir);
      assert.equal(s.requests.length, 1);
      assert.deepEqual([s.requests[0].timeMs, s.requests[0].usage], [null, null]);
      assert.deepEqual(
        s.diagnostics.map((d) => [d.file, d.line, d.severity]),
        [[join(dir, '001-a.meta.json'), 1, 'warning']],
      );
      assert.match(s.diagnostics[0].message, /^meta ignored \(time and usage unknown\): /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('capture folder reader: the kind of a body without tools', () => {
  it("Codex's compaction prompt at the end is a summary; a history that ends mentioning a summary is the agent's", async () => {
    const { captureDir } = await import('../analyze/review-helpers.js');
    const codex = 'test/fixtures/codex/requests';
    const lastText = (b: any) => b.input.at(-1).content[0];
    const dir = captureDir(codex, [
      ['008-openai-responses'],
      ['008-openai-responses', (b) => (lastText(b).text = 'Thanks. Please keep the summary of the tests short in the README.')],
    ]);
    const s = await readCaptureSession(dir);
    assert.deepEqual(s.requests.map((r) => r.kind), ['summary', 'agent']);
  });
});
