import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { REQUEST_SCHEME } from '../../src/extension/requestDiff.js';
import type { RequestComparisonText } from '../../src/extension/workerProtocol.js';
import { PI_MAIN, api, testEnv, until } from './helpers.js';

/** The diff tab now active, with its two documents. */
async function activeDiff(): Promise<{ label: string; left: vscode.TextDocument; right: vscode.TextDocument }> {
  const tab = await until('a diff editor', () => {
    const t = vscode.window.tabGroups.activeTabGroup.activeTab;
    return t?.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === REQUEST_SCHEME ? t : undefined;
  });
  const input = tab.input as vscode.TabInputTextDiff;
  return { label: tab.label, left: await vscode.workspace.openTextDocument(input.original), right: await vscode.workspace.openTextDocument(input.modified) };
}

describe('Compare Request with Matched (diff editor)', () => {
  afterEach(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  it('the Problems entry of the main Pi recording\'s break #9 opens #8 ↔ #9 at the changed byte (messages[0].content[0].text, prefix byte 56)', async () => {
    const a = await api();
    const uri = vscode.Uri.file(join(testEnv.home, PI_MAIN));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await a.diagnostics.analyzed(uri);
    const diags = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Prefix Lens');
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, diags[0].range);
    const cmp = actions.find((x) => x.title === 'Compare with request #8');
    assert.deepEqual(cmp?.command?.arguments, [{ path: uri.fsPath, requestIndex: 9, base: 8 }]);
    const c = (await vscode.commands.executeCommand(cmp!.command!.command, ...cmp!.command!.arguments!)) as RequestComparisonText;
    assert.deepEqual(c.difference, { kind: 'differs', depth: 2, segment: 'messages', path: 'messages[0].content[0].text', offsetInBlock: 49, prefixByte: 56 });
    const { label, left, right } = await activeDiff();
    assert.equal(label, 'pi lab session: #8 ↔ #9 · verdict break (history-rewritten) · first difference in block 2 (messages · messages[0].content[0].text), byte 49 of the block, prefix byte 56');
    assert.deepEqual([left.lineAt(0).text, right.lineAt(0).text], ['pi lab session', 'pi lab session']);
    // The later request's cursor is on the line of the first changed byte; the text before it is the same on both sides.
    const at = c.request.changeAt!;
    assert.deepEqual(c.base.changeAt, at);
    const editor = await until('the diff\'s right editor', () => vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === right.uri.toString()));
    assert.deepEqual([editor.selection.active.line, editor.selection.active.character], [at.line, 0]);
    const same = (d: vscode.TextDocument) => d.lineAt(at.line).text.slice(0, at.character);
    assert.equal(same(left), same(right));
    assert.notEqual(left.lineAt(at.line).text.slice(at.character), right.lineAt(at.line).text.slice(at.character));
    // Each block is named by a header line; the one the break falls in is the first message.
    assert.match(right.lineAt(at.line - 1).text, /^──── block \d+: messages · messages\[0\] · [\d,]+ bytes at prefix byte [\d,]+ · prefix [0-9a-f]{12}/);
  });

  it('from the Timeline: a request and the one it was matched with, with the verdict of the panel\'s report', async () => {
    const a = await api();
    const file = join(testEnv.home, PI_MAIN);
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path: file });
    const panel = await until('the panel', async () => (await a.timelines()).get(file));
    await until('the first load', () => panel.loads >= 1, 60_000);
    const r13 = panel.current.requests.find((r) => r.index === 13)!;
    const c = (await vscode.commands.executeCommand('prefixLens.compareRequests', { ref: panel.ref, requestIndex: 13 })) as RequestComparisonText & { title: string };
    assert.equal(r13.matched, 4);
    // The same line `prefix-lens diff` prints for this request.
    assert.equal(c.title, 'pi lab session: #4 ↔ #13 · verdict break (history-rewritten) · first difference in block 4 (messages · messages[3].content[0].text), byte 49 of the block, prefix byte 188');
    assert.equal((await activeDiff()).label, c.title);
    // Without a session named, the active Timeline's session is taken.
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await until('the Timeline active again', () => panel.panel.active || undefined);
    const again = (await vscode.commands.executeCommand('prefixLens.compareRequests', { requestIndex: 9 })) as { title: string };
    assert.equal(again.title, 'pi lab session: #8 ↔ #9 · verdict break (history-rewritten) · first difference in block 2 (messages · messages[0].content[0].text), byte 49 of the block, prefix byte 56');
  });

  it('a document VS Code asks for again (a diff tab restored after a reload) is rendered again; requests whose prefix changed since the report are refused', async () => {
    const a = await api();
    const file = join(testEnv.home, PI_MAIN);
    const [ref] = (await a.worker.run({ op: 'resolve', path: file, opts: { env: {}, home: testEnv.home } }, { urgent: true })).refs;
    const report = (await a.analyze(ref))!;
    const hash = (i: number) => report.requests.find((r) => r.index === i)!.prefixHash;
    const query = { key: ref.key, path: ref.path, sessionId: report.id, base: 3, index: 4, hashes: { base: hash(3), index: hash(4) }, side: 'request' };
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: REQUEST_SCHEME, path: '/pi/restored/request-4.txt', query: JSON.stringify(query) }));
    assert.deepEqual([doc.lineAt(0).text, doc.lineAt(1).text.split(' · ').slice(0, 3)], ['pi lab session', ['fake-openai/gpt-5', 'openai-completions', 'reconstructed']]);
    await assert.rejects(
      a.worker.run({ op: 'compare', ref, sessionId: report.id, base: 3, index: 4, hashes: { base: hash(3), index: 'not-its-hash' }, env: {} }),
      /requests #3 and #4 of 01a230ec-9a4e-7417-8af1-68d34234bdc8 changed since the report was made/,
    );
  });
});
