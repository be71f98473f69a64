import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { COMMANDS } from '../../src/extension/extension.js';
import { EXTENSION_ID, api, testEnv, until } from './helpers.js';

const manifest = JSON.parse(readFileSync(join(testEnv.repo, 'package.json'), 'utf8'));

describe('activation', () => {
  it('is not active at startup: nothing activates on "*" and no Prefix Lens view or transcript is open yet', () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(ext, 'the extension is loaded in development mode');
    assert.equal(ext.isActive, false);
    assert.deepEqual(manifest.activationEvents, ['onLanguage:jsonl', 'onWebviewPanel:prefixLens.timeline']);
  });

  it('activates on the Sessions view and reports its activation time', async () => {
    await vscode.commands.executeCommand('prefixLens.sessions.focus');
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const a = await ext.activate();
    assert.equal(ext.isActive, true);
    console.log(`    activation time: ${a.activationMs.toFixed(1)} ms (target < 100 ms)`);
    assert.equal(a.log.name, 'Prefix Lens');
  });

  it('registers every contributed command, in category "Prefix Lens"', async () => {
    await api();
    const all = new Set(await vscode.commands.getCommands(true));
    const contributed = (manifest.contributes.commands as Array<{ command: string; category: string }>).map((c) => c.command);
    assert.deepEqual([...COMMANDS].sort(), [...contributed].sort());
    for (const id of contributed) assert.ok(all.has(id), `${id} is registered`);
    for (const c of manifest.contributes.commands) assert.equal(c.category, 'Prefix Lens', c.command);
    for (const id of ['prefixLens.openTimeline', 'prefixLens.diagnoseSession', 'prefixLens.diagnoseActive', 'prefixLens.refreshSessions', 'prefixLens.refreshFleet', 'prefixLens.togglePhuxContextAwareness', 'prefixLens.exportHtml', 'prefixLens.showLog']) {
      assert.ok(all.has(id), id);
    }
  });

  it('runs the analysis in a worker thread, not on the extension host thread', async () => {
    const a = await api();
    const before = a.worker.stats.workersStarted;
    const r = await a.worker.run({ op: 'discover', opts: { env: {}, home: testEnv.home } });
    assert.equal(r.refs.filter((x) => x.host === 'pi').length, 2);
    assert.ok(a.worker.stats.workersStarted >= Math.max(1, before));
  });

  it('cancelling a running analysis terminates the worker, and the next job starts a fresh one', async () => {
    const a = await api();
    // Background jobs of the views (summaries of the listed sessions) first: this job must be the running one.
    await until('the worker to be idle', () => !a.worker.busy);
    const started = a.worker.stats.workersStarted;
    const cts = new vscode.CancellationTokenSource();
    const ref = (await a.sessions.sessions()).find((r) => r.host === 'opencode')!;
    const job = a.worker.run({ op: 'analyze', ref, env: {}, overrides: { ttlSeconds: {}, prices: [] } }, { token: cts.token, urgent: true });
    cts.cancel();
    await assert.rejects(job, /cancelled/);
    const r = await a.worker.run({ op: 'discover', opts: { env: {}, home: testEnv.home } });
    assert.equal(r.refs.length, 13);
    assert.equal(a.worker.stats.workersStarted, started + 1);
  });
});
