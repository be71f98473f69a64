/**
 * The HTML shells and the standalone report writer (src/report/webviewHtml.ts, html.ts): the
 * writer is incremental (a session in chunks of whole requests, head first, nothing held), the data element
 * cannot be closed by untrusted text, and both CSPs forbid everything but the app.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeRefDirect } from '../../../src/cli/pipeline.js';
import { resolveArg } from '../../../src/hosts/registry.js';
import { createHtmlReportWriter, htmlReport, sessionChunks } from '../../../src/report/html.js';
import type { Report, SessionReport } from '../../../src/report/json.js';
import { scriptSafeJson, webviewShellHtml } from '../../../src/report/webviewHtml.js';

const assets = { script: 'console.log("app")', style: 'body{color:red}' };
const session = (id: string, title: string): SessionReport => ({ host: 'pi', id, path: `/x/${id}.jsonl`, title } as unknown as SessionReport);
const sha = (t: string) => `'sha256-${createHash('sha256').update(t).digest('base64')}'`;
const data = (html: string) => html.match(/<script type="application\/json" id="prefix-lens-report">([^]*?)<\/script>/)![1];

describe('HTML report writer and shells', () => {
  it('writes the head, then one chunk per session as it is given, then the tail', async () => {
    const chunks: string[] = [];
    const w = createHtmlReportWriter((c) => void chunks.push(c), assets);
    assert.equal(chunks.length, 0, 'nothing before the first session');
    await w.session(session('a', 'A'));
    assert.equal(chunks.length, 2);
    assert.match(chunks[0], /^<!DOCTYPE html>[^]*\{"version":1,"sessions":\[$/);
    assert.equal(chunks[1], scriptSafeJson(session('a', 'A')));
    await w.session(session('b', 'B'));
    assert.equal(chunks[2], `,${scriptSafeJson(session('b', 'B'))}`);
    await w.end();
    assert.equal(chunks.length, 4);
    assert.deepEqual(JSON.parse(data(chunks.join(''))), { version: 1, sessions: [session('a', 'A'), session('b', 'B')] });
    await assert.rejects(() => w.end(), /end\(\) called twice/);
    await assert.rejects(() => w.session(session('c', 'C')), /session\(\) after end\(\)/);
  });

  it('streams a session request by request: the chunks join to its JSON, none much above 64 K characters', async () => {
    const dir = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';
    const [file] = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    const [ref] = await resolveArg(join(dir, file), { env: {}, home: '/nonexistent' });
    const [s] = await analyzeRefDirect(ref);
    // Some long requests, so that the chunking has something to cut.
    const big = { ...s, requests: Array.from({ length: 40 }, () => s.requests).flat(), extra: undefined };
    const chunks = [...sessionChunks(big)];
    assert.equal(chunks.join(''), scriptSafeJson(big));
    assert.ok(chunks.length > 2, `${chunks.length} chunks`);
    const longest = Math.max(...big.requests.map((r) => scriptSafeJson(r).length));
    for (const c of chunks) assert.ok(c.length < 64 * 1024 + longest + 1, `chunk of ${c.length}`);
    const out: string[] = [];
    const w = createHtmlReportWriter((c) => void out.push(c), assets);
    await w.session(session('a', 'A'));
    await w.session(big);
    await w.end();
    assert.equal(data(out.join('')), `{"version":1,"sessions":[${scriptSafeJson(session('a', 'A'))},${scriptSafeJson(big)}]}`);
  });

  it('an empty report is still a whole document', async () => {
    const chunks: string[] = [];
    const w = createHtmlReportWriter((c) => void chunks.push(c), assets);
    await w.end();
    assert.deepEqual(JSON.parse(data(chunks.join(''))), { version: 1, sessions: [] });
  });

  it('escapes every < (and U+2028/2029) in the data, so </script> and <!-- in a title stay data', async () => {
    const title = '</script><script>alert(1)</script><!-- \u2028 \u2029';
    const html = await htmlReport({ version: 1, sessions: [session('x', title)] } as Report, assets);
    const d = data(html);
    assert.doesNotMatch(d, /[<\u2028\u2029]/);
    assert.equal((JSON.parse(d) as Report).sessions[0].title, title);
    assert.equal(html.match(/<\/script>/g)!.length, 2, 'only the data element and the app script close');
  });

  it('the standalone CSP allows exactly the inlined style and script by SHA-256 and nothing remote', async () => {
    const html = await htmlReport({ version: 1, sessions: [] }, assets);
    const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)![1];
    assert.equal(csp, `default-src 'none'; style-src ${sha(assets.style)}; script-src ${sha(assets.script)}; img-src data:`);
    assert.ok(html.includes(`<style>${assets.style}</style>`) && html.includes(`<script>${assets.script}</script>`));
  });

  it('refuses assets that would close their element early', async () => {
    await assert.rejects(() => htmlReport({ version: 1, sessions: [] }, { script: 'a="</script>"', style: '' }), /cannot be inlined/);
    await assert.rejects(() => htmlReport({ version: 1, sessions: [] }, { script: '', style: 'a{}</style>' }), /cannot be inlined/);
  });

  it('the panel shell: CSP default-src none, script only by nonce, style from cspSource, title escaped', () => {
    const html = webviewShellHtml({ cspSource: 'vscode-webview://abc', nonce: 'AAAAAAAAAAAAAAAAAAAAAA==', scriptUri: 'vscode-webview://abc/dist/webview.js', styleUri: 'vscode-webview://abc/dist/webview.css', title: '<b>x</b>' });
    assert.match(html, /content="default-src 'none'; img-src vscode-webview:\/\/abc; style-src vscode-webview:\/\/abc; font-src vscode-webview:\/\/abc; script-src 'nonce-AAAAAAAAAAAAAAAAAAAAAA=='"/);
    assert.match(html, /<script nonce="AAAAAAAAAAAAAAAAAAAAAA==" src="vscode-webview:\/\/abc\/dist\/webview.js"><\/script>/);
    assert.match(html, /<title>&lt;b&gt;x&lt;\/b&gt;<\/title>/);
    assert.match(html, /<div id="prefix-lens-app"><\/div>/);
    assert.throws(() => webviewShellHtml({ cspSource: 'x', nonce: "a' 'unsafe-inline", scriptUri: '', styleUri: '', title: '' }), /nonce/);
  });
});
