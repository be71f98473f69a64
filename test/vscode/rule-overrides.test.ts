import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { PI_MAIN, api, testEnv, until } from './helpers.js';

const config = () => vscode.workspace.getConfiguration('prefixLens');

/** The Prefix Lens Problems entry on a 1-based line of `uri`. */
const entryOn = (uri: vscode.Uri, line: number) => vscode.languages.getDiagnostics(uri).find((d) => d.source === 'Prefix Lens' && d.range.start.line + 1 === line);

describe('rule overrides changed while results are shown', () => {
  after(async () => {
    await config().update('priceOverrides', undefined, vscode.ConfigurationTarget.Global);
    await config().update('ttlSecondsOverrides', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('the open Timelines and the Problems entries are judged again: a price override reprices the Claude Code /compact (#9), a TTL override is the lifetime the main Pi recording\'s #2 is judged with', async function () {
    this.timeout(180_000);
    const a = await api();
    const refs = await a.sessions.sessions();
    const cc = refs.find((r) => r.host === 'claude-code' && r.id.startsWith('8aa2b6b2'))!;
    const pi = refs.find((r) => r.path === join(testEnv.home, PI_MAIN))!;
    assert.ok(cc && pi, 'both example sessions are listed');
    // The Claude Code transcript in an editor (its Problems entries) and both Timelines, each at a request.
    const uri = vscode.Uri.file(cc.path);
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await a.diagnostics.analyzed(uri);
    assert.match(entryOn(uri, 113)!.message, /^Cache break at request #9: .* · 19,213 tokens re-billed \(\$0\.07\)/);
    // One after the other: a webview runs only while its tab is shown.
    const tl = await a.timelines();
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path: cc.path, requestIndex: 4 });
    const ccPanel = tl.get(cc.key)!;
    await until('the Claude Code app to ask for its report', () => ccPanel.loads >= 1, 60_000);
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path: pi.path, requestIndex: 3 });
    const piPanel = tl.get(pi.key)!;
    await until('the Pi app to ask for its report', () => piPanel.loads >= 1, 60_000);
    const req = (p: typeof ccPanel, i: number) => p.current.requests.find((r) => r.index === i)!;
    // The bundled prices: Claude Sonnet 4.5 input $3/M; the break re-wrote 19,213 tokens (×1.25 write − 0.1 read).
    assert.deepEqual([req(ccPanel, 9).costUSD, req(ccPanel, 9).sources.cost, req(piPanel, 2).ttlMs], [0.06628485, 'rules', 600_000]);
    const loads = [ccPanel.loads, piPanel.loads];

    // Claude Sonnet 4.5 at $6/M input: the same 19,213 tokens cost twice as much.
    await config().update('priceOverrides', [{ match: 'claude-sonnet-4-5', input: 6, output: 30 }], vscode.ConfigurationTarget.Global);
    await until('the Claude Code Timeline to be repriced', () => req(ccPanel, 9).costUSD === 0.1325697, 60_000);
    assert.deepEqual([req(ccPanel, 9).sources.cost, ccPanel.current.totals.costUSD, req(ccPanel, 9).lostTokens], ['override', 0.1325697, 19213]);
    await until('the Problems entry to be repriced', () => entryOn(uri, 113)?.message.includes('19,213 tokens re-billed ($0.13)'), 60_000);
    // The whole report is sent again (a Load without a selection: the app keeps the selected request).
    await until('the webview to be sent the new report', () => ccPanel.loads > loads[0], 30_000);

    // OpenAI's entries live 60 s instead of 10 min: the main Pi recording's gpt-5 requests are judged with that lifetime.
    await config().update('ttlSecondsOverrides', { openai: 60 }, vscode.ConfigurationTarget.Global);
    await until('the Pi Timeline to be judged with the new lifetime', () => req(piPanel, 2).ttlMs === 60_000, 60_000);
    assert.deepEqual(
      piPanel.current.requests.map((r) => r.ttlMs),
      [null, 60_000, 60_000, 60_000, null, 300_000, 300_000, 300_000, 300_000, 300_000, null, 60_000, 60_000],
    );
    assert.ok(piPanel.loads > loads[1], 'the Pi panel was sent the new report');
    assert.equal(piPanel.panel.title, 'Timeline: pi lab session');

    // The Sessions view summarizes with the new rules too (its cache's basis names them).
    assert.equal(a.cache.basis().endsWith(':{"ttlSeconds":{"openai":60},"prices":[{"match":"claude-sonnet-4-5","input":6,"output":30}]}'), true, a.cache.basis());
    const [summary] = await a.sessions.summariesOf([cc]);
    assert.equal(summary?.costUSD, 0.1325697);

    // Back to the bundled rules: the panel and the entry return to the bundled prices.
    await config().update('priceOverrides', undefined, vscode.ConfigurationTarget.Global);
    await until('the Claude Code Timeline back at the bundled prices', () => req(ccPanel, 9).costUSD === 0.06628485, 60_000);
    await until('the Problems entry back at the bundled prices', () => entryOn(uri, 113)?.message.includes('19,213 tokens re-billed ($0.07)'), 60_000);
  });
});
