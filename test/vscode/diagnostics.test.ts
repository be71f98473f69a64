import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { PI_LONG, PI_MAIN, api, testEnv, until } from './helpers.js';

/** Opens a fixture transcript and waits for its Problems entries. */
async function openAndWait(rel: string): Promise<{ uri: vscode.Uri; diags: vscode.Diagnostic[] }> {
  const a = await api();
  const uri = vscode.Uri.file(join(testEnv.home, rel));
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc);
  await a.diagnostics.analyzed(uri);
  const diags = await until('Problems entries', () => {
    const d = vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'Prefix Lens');
    return d.length ? d : undefined;
  });
  return { uri, diags };
}

describe('Problems diagnostics on an opened transcript', () => {
  it('puts a warning on the exact lines of the three breaks of the main Pi recording (33, 38, 45)', async () => {
    const { diags } = await openAndWait(PI_MAIN);
    const lines = diags.map((d) => [d.range.start.line + 1, d.severity, d.code]);
    assert.deepEqual(lines, [
      [33, vscode.DiagnosticSeverity.Warning, 'break'],
      [38, vscode.DiagnosticSeverity.Warning, 'break'],
      [45, vscode.DiagnosticSeverity.Warning, 'break'],
    ]);
    assert.equal(
      diags[0].message,
      'Cache break at request #9: history-rewritten (compaction: history replaced by a summary at message 0) · prefix changed at messages block 0, messages[0].content[0].text, byte 56 · cache read 1,531 of 1,453 expected · compared with request #8',
    );
  });

  it('links each break to the line of the request it was compared with (#8 on line 28, #4 on line 12)', async () => {
    const { diags } = await openAndWait(PI_MAIN);
    assert.deepEqual(
      diags.map((d) => d.relatedInformation?.map((r) => [r.location.range.start.line + 1, r.message])),
      [
        [[28, 'request #8, the cache entry it was compared with']],
        [[28, 'request #8, the cache entry it was compared with']],
        [[12, 'request #4, the cache entry it was compared with']],
      ],
    );
  });

  it('the long recording has one break, on line 11', async () => {
    const { diags } = await openAndWait(PI_LONG);
    assert.deepEqual(
      diags.map((d) => [d.range.start.line + 1, d.code]),
      [[11, 'break']],
    );
  });

  it('Claude Code and Codex transcripts get theirs too: Claude Code #9 on line 113 (vs #8, line 73), Codex #7 on line 82 (vs #6, line 63; the compaction request #6.1 the rollout records between them)', async () => {
    const cc = await openAndWait('.claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl');
    const codex = await openAndWait('.codex/sessions/2026/12/01/rollout-2026-12-01T10-26-03-01a23123-dcf1-7130-9f87-2b10ef481a1c.jsonl');
    const rows = (diags: vscode.Diagnostic[]) => diags.map((d) => [d.range.start.line + 1, d.code, d.relatedInformation?.map((r) => r.location.range.start.line + 1), /^Cache break at request #(\d+): ([\w-]+)/.exec(d.message)?.slice(1)]);
    assert.deepEqual(rows(cc.diags), [[113, 'break', [73], ['9', 'history-rewritten']]]);
    assert.match(cc.diags[0].message, /19,213 tokens re-billed/);
    // The compaction is named first (the rollout records it), then the change it came with: the
    // leading developer item (system 1) is gone from the replacement history.
    assert.deepEqual(rows(codex.diags), [[82, 'break', [63], ['7', 'history-rewritten']]]);
    assert.match(codex.diags[0].message, /^Cache break at request #7: history-rewritten \(compaction: history replaced by a summary \(a summary request came after the compared one\); system 1 changed with it\)/);
    // The compacted history after the instructions is new to the cache: nothing re-billed.
    assert.doesNotMatch(codex.diags[0].message, /re-billed/);
  });

  it('a .jsonl that no host recognizes gets no entries ("Diagnose Active Transcript" says it is not a transcript)', async () => {
    const a = await api();
    const file = join(testEnv.tmp, 'events.jsonl');
    writeFileSync(file, '{"type":"session","note":"an event log, not a Pi session"}\n{"event":1}\n');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    await vscode.window.showTextDocument(doc);
    await a.diagnostics.analyzed(doc.uri);
    assert.equal(await a.diagnostics.diagnose(doc), null);
    assert.deepEqual(vscode.languages.getDiagnostics(doc.uri), []);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('hovering a request line shows its verdict', async () => {
    const { uri } = await openAndWait(PI_MAIN);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, new vscode.Position(32, 3));
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))).join('\n');
    assert.match(text, /request #9: \*\*break\*\*/);
    const hit = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, new vscode.Position(6, 3));
    assert.match(hit.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))).join('\n'), /request #2: \*\*hit\*\*/);
  });

  it('offers "Open Timeline at this request" on a break', async () => {
    const { uri, diags } = await openAndWait(PI_MAIN);
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, diags[1].range);
    const mine = actions.filter((x) => x.title === 'Open Timeline at this request');
    assert.equal(mine.length, 1);
    assert.deepEqual(mine[0].command?.arguments, [{ path: uri.fsPath, requestIndex: 10 }]);
  });

  it('clears the entries when no editor tab shows the transcript any more', async () => {
    const { uri } = await openAndWait(PI_LONG);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await until('entries cleared', () => vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'Prefix Lens').length === 0, 10_000);
  });
});
