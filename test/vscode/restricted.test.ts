import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, testEnv } from './helpers.js';

describe('restricted mode (untrusted workspace)', () => {
  it('the workspace is untrusted and the extension still activates (limited support)', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const a = await api();
    assert.ok(a.activationMs >= 0);
  });

  it('spawns nothing: the Fleet view shown and refreshed runs no phux (the configured fake phux records every start)', async () => {
    const a = await api();
    await vscode.commands.executeCommand('prefixLens.fleet.focus');
    await vscode.commands.executeCommand('prefixLens.refreshFleet');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(a.fleet.calls, 0);
    assert.equal(existsSync(join(testEnv.tmp, 'fake-phux.pid')), false, 'fake phux was never started');
    const [msg] = a.fleet.getChildren();
    assert.equal(msg.kind === 'message' && msg.text, 'Restricted mode: phux is not run in an untrusted workspace');
  });

  it('ignores the workspace value of restricted settings (a workspace cannot add session folders)', async () => {
    const a = await api();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const written = JSON.parse(readFileSync(join(folder, '.vscode/settings.json'), 'utf8'));
    assert.deepEqual(written['prefixLens.sessionFolders.pi'], [join(testEnv.tmp, 'workspace-sessions')], 'the workspace asks for a folder');
    assert.deepEqual(vscode.workspace.getConfiguration('prefixLens').get('sessionFolders.pi'), [], 'restricted setting: the workspace value is not used');
    const refs = await a.sessions.refresh();
    assert.equal(refs.filter((r) => r.path.startsWith(join(testEnv.tmp, 'workspace-sessions'))).length, 0);
    assert.equal(refs.filter((r) => r.host === 'pi').length, 2, 'the default Pi sessions are still listed (reading is allowed)');
  });

  it('the capture proxy does not start and sets nothing for terminals in restricted mode', async () => {
    const a = await api();
    assert.equal(await a.capture.start({ port: 0, out: join(testEnv.tmp, 'restricted-captures') }), undefined);
    assert.equal(await a.capture.toggleTerminals(true), false);
    assert.equal(a.capture.url, null);
    assert.equal(a.capture.terminalsEnabled, false);
    assert.equal(a.toggle.collection.get('ANTHROPIC_BASE_URL'), undefined);
    assert.equal(a.toggle.collection.get('OPENAI_BASE_URL'), undefined);
    assert.equal(existsSync(join(testEnv.tmp, 'restricted-captures')), false);
  });
});
