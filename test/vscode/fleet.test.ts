import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { FleetNode } from '../../src/extension/fleetView.js';
import { PI_MAIN, api, testEnv, until } from './helpers.js';

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

  it("builds a pane's hover only when it is hovered (resolveTreeItem), as plain text: phux's title with Markdown characters shows as it is", async () => {
    const a = await api();
    const pane = a.fleet.getChildren().flatMap((s) => a.fleet.getChildren(s)).flatMap((w) => a.fleet.getChildren(w)).find((n) => n.kind === 'pane' && n.pane.terminal === '@7')!;
    const provider: vscode.TreeDataProvider<FleetNode> = a.fleet;
    const item = await provider.getTreeItem(pane);
    assert.equal(item.tooltip, undefined, 'getTreeItem built a hover');
    const resolved = (await provider.resolveTreeItem!(item, pane, new vscode.CancellationTokenSource().token)) ?? item;
    assert.equal(
      resolved.tooltip,
      'phux-ask[deploy]:Approve deploy??s=Yes|No\ncodex · blocked (confidence 0.95) · attention high\n/home/dev/src/infra\nwaiting on a reported human-answerable ask (ADR-0035 title sentinel)',
    );
  });

  it('stops polling when the view is hidden', async () => {
    const a = await api();
    await vscode.commands.executeCommand('workbench.view.explorer');
    await new Promise((r) => setTimeout(r, 500));
    const calls = a.fleet.calls;
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(a.fleet.calls, calls, 'no phux call while the Fleet view is hidden');
  });

  it("a pane whose cwd is a listed session's project opens that session's Timeline; the others open nothing", async () => {
    const a = await api();
    const ref = (await a.sessions.sessions()).find((r) => r.path === join(testEnv.home, PI_MAIN));
    assert.ok(ref?.project, 'the recorded Pi main session has a project');
    // The recorded fleet, with its first pane (@1) moved into the session's project.
    const fleet = JSON.parse(readFileSync(join(testEnv.repo, 'test/fixtures/phux/phux-agent-list-mixed-fleet.json'), 'utf8'));
    fleet.agents[0].cwd = ref.project;
    writeFileSync(join(testEnv.tmp, 'fleet-at-project.json'), JSON.stringify(fleet));
    const standIn = join(testEnv.tmp, 'phux-at-project.cjs');
    writeFileSync(standIn, `#!/usr/bin/env node\nprocess.stdout.write(require('node:fs').readFileSync(${JSON.stringify(join(testEnv.tmp, 'fleet-at-project.json'))}, 'utf8'));\n`);
    chmodSync(standIn, 0o755);
    const config = vscode.workspace.getConfiguration('prefixLens');
    const before = config.inspect<string>('phux.path')?.globalValue;
    await config.update('phux.path', standIn, vscode.ConfigurationTarget.Global);
    try {
      await vscode.commands.executeCommand('prefixLens.fleet.focus');
      await a.fleet.refresh();
      await until('the fleet from the stand-in', () => a.fleet.current?.state === 'ok' && a.fleet.current.panes.some((p) => p.cwd === ref.project), 20_000);
      const panes: FleetNode[] = [];
      const walk = (n?: FleetNode): void => {
        for (const c of a.fleet.getChildren(n)) c.kind === 'pane' ? panes.push(c) : walk(c);
      };
      walk();
      assert.equal(panes.length, 5);
      const items = await Promise.all(panes.map(async (n) => [n.kind === 'pane' ? n.pane.terminal : '', await a.fleet.getTreeItem(n)] as const));
      const linked = items.filter(([, item]) => item.command);
      assert.deepEqual(linked.map(([t]) => t), ['@1']);
      const [, item] = linked[0]!;
      assert.equal(item.contextValue, 'pane.session');
      assert.equal(item.command?.command, 'prefixLens.openTimeline');
      assert.equal((item.command?.arguments?.[0] as { key: string }).key, ref.key);
      await vscode.commands.executeCommand(item.command!.command, ...(item.command!.arguments ?? []));
      const tl = await a.timelines();
      await until("the session's Timeline panel", () => tl.get(ref.key), 30_000);
      assert.equal(tl.get(ref.key)?.panel.title, 'Timeline: pi lab session');
    } finally {
      await config.update('phux.path', before, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });
});
