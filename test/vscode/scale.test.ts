import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { PI_LONG, api, sessionRows, testEnv } from './helpers.js';

describe('scale (printed, not asserted against a time)', () => {
  after(async () => {
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.pi', undefined, vscode.ConfigurationTarget.Global);
  });

  it("renders the listed sessions' rows 100 times and prints the time of a row (each render) and of its hover (resolveTreeItem, only when hovered)", async () => {
    const a = await api();
    await a.sessions.summariesOf(await a.sessions.sessions());
    const nodes = await sessionRows();
    const rounds = 100;
    let t0 = performance.now();
    for (let i = 0; i < rounds; i++) for (const n of nodes) a.sessions.getTreeItem(n);
    const row = ((performance.now() - t0) * 1000) / (rounds * nodes.length);
    const items = nodes.map((n) => a.sessions.getTreeItem(n));
    t0 = performance.now();
    for (let i = 0; i < rounds; i++) nodes.forEach((n, j) => a.sessions.resolveTreeItem(items[j], n));
    const hover = ((performance.now() - t0) * 1000) / (rounds * nodes.length);
    console.log(`    Sessions view: ${nodes.length} analyzed rows; a row renders in ${row.toFixed(1)} µs, its hover takes ${hover.toFixed(1)} µs more when hovered (every render built it before)`);
    assert.equal(items.filter((i) => i.tooltip instanceof vscode.MarkdownString).length, nodes.length);
  });

  it('lists 1,000 generated sessions (20 projects × 50) and prints the time', async function () {
    this.timeout(180_000);
    const a = await api();
    const root = join(testEnv.tmp, 'generated-sessions');
    const text = readFileSync(join(testEnv.home, PI_LONG), 'utf8');
    for (let p = 0; p < 20; p++) {
      const dir = join(root, `--home-user-generated-project-${p}--`);
      mkdirSync(dir, { recursive: true });
      for (let s = 0; s < 50; s++) {
        const id = `01a230ec-0000-7000-8000-${String(p * 50 + s).padStart(12, '0')}`;
        writeFileSync(join(dir, `2026-12-01T00-00-00-000Z_${id}.jsonl`), text.replace(/"id":"[0-9a-f-]{36}"/, `"id":"${id}"`).replace('/home/user/pi-lab/long/project', `/home/user/generated/project-${p}`));
      }
    }
    await vscode.workspace.getConfiguration('prefixLens').update('sessionFolders.pi', [root], vscode.ConfigurationTarget.Global);
    const t0 = performance.now();
    await a.sessions.refresh();
    const hosts = await a.sessions.getChildren();
    const projects = (await Promise.all(hosts.map((h) => a.sessions.getChildren(h)))).flat();
    const rows = (await Promise.all(projects.map((p) => a.sessions.getChildren(p)))).flat();
    const ms = performance.now() - t0;
    const generated = rows.filter((r) => r.kind === 'session' && r.ref.path.startsWith(root)).length;
    console.log(`    Sessions view: ${rows.length} sessions (${generated} generated) listed in ${ms.toFixed(0)} ms (target < 1000 ms; discovery in the worker, from file metadata)`);
    assert.equal(generated, 1000);
  });
});
