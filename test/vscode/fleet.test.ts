import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { FleetNode } from '../../src/extension/fleetView.js';
import { api, until } from './helpers.js';

describe('Fleet view (phux.path = test/fixtures/phux/fake-phux.mjs, the recorded 5-pane fleet)', () => {
  it('polls while visible and groups the panes by session and window', async () => {
    const a = await api();
    await vscode.commands.executeCommand('prefixLens.fleet.focus');
    await until('a fleet answer', () => a.fleet.current?.state === 'ok', 20_000);
    const sessions = a.fleet.getChildren();
    const shape = (n: FleetNode): unknown =>
      n.kind === 'session' ? [n.name, a.fleet.getChildren(n).map(shape)] : n.kind === 'window' ? [n.name, a.fleet.getChildren(n).map(shape)] : n.kind === 'pane' ? n.pane.terminal : n.text;
    const tree = sessions.map(shape);
    assert.equal(a.fleet.current?.panes.length, 5);
    assert.equal(JSON.stringify(tree).match(/"@\d+"/g)?.length, 5);
    assert.ok(a.fleet.calls >= 1);
  });

  it('stops polling when the view is hidden', async () => {
    const a = await api();
    await vscode.commands.executeCommand('workbench.view.explorer');
    await new Promise((r) => setTimeout(r, 500));
    const calls = a.fleet.calls;
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(a.fleet.calls, calls, 'no phux call while the Fleet view is hidden');
  });
});
