import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { captureRoots } from '../../src/hosts/capturestamp.js';
import { FromWebviewMessageSchema, MessageType, REPORT_ELEMENT_ID, copyPathMessage } from '../../src/protocol.js';
import { writeSession } from '../../scripts/bench/corpus.js';
import { PI_MAIN, api, testEnv, until } from './helpers.js';

type Panel = NonNullable<ReturnType<Awaited<ReturnType<Awaited<ReturnType<typeof api>>['timelines']>>['get']>>;

/**
 * A full analysis of a panel's session file, not the live one the worker keeps for the panel (an
 * `analyze` of a followed session is answered from it): the panel is closed first.
 */
async function fullAnalysis(panel: Panel) {
  const a = await api();
  const ref = panel.ref;
  panel.panel.dispose();
  await until('the worker to forget the followed session', () => !a.worker.busy);
  return a.analyze(ref);
}

describe('Timeline panel', () => {
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('opens one panel per session at a request ("Open Timeline at this request"), and the app asks for the report', async () => {
    const a = await api();
    const path = join(testEnv.home, PI_MAIN);
    const report = await vscode.commands.executeCommand<{ requests: unknown[]; totals: { breaks: number } }>('prefixLens.openTimeline', { path, requestIndex: 10 });
    assert.equal(report?.requests.length, 13);
    assert.equal(report?.totals.breaks, 3);
    const tl = await a.timelines();
    const ref = (await a.sessions.sessions()).find((r) => r.path === path)!;
    const panel = tl.get(ref.key)!;
    assert.ok(panel, 'a panel for the session');
    assert.equal(panel.panel.viewType, 'prefixLens.timeline');
    assert.equal(panel.panel.title, 'Timeline: pi lab session');
    assert.deepEqual(panel.panel.webview.options.localResourceRoots?.map((u) => u.path), [vscode.Uri.joinPath(a.extensionUri, 'dist').path]);
    // The app posts `ready` once it runs; only then does the panel send `load` (with request #10 selected).
    await until('the app to ask for the report', () => panel.loads >= 1, 60_000);
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path, requestIndex: 13 });
    assert.equal(tl.size, 1, 'the same session reuses its panel');
    assert.equal(panel.loads, 1, 'revealing an open panel selects, it does not reload');
  });

  it("copies the session path when the header's copy button posts copyPath (through the protocol), and nothing for a message that names a path", async () => {
    const a = await api();
    const path = join(testEnv.home, PI_MAIN);
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path });
    const ref = (await a.sessions.sessions()).find((r) => r.path === path)!;
    const panel = (await a.timelines()).get(ref.key)!;
    await vscode.env.clipboard.writeText('before');
    // What the app posts, as postMessage carries it (a structured clone: JSON here), checked by the schema the webview checks with.
    const wire = JSON.parse(JSON.stringify(FromWebviewMessageSchema.parse(copyPathMessage(0))));
    assert.deepEqual(wire, { type: MessageType.CopyPath, sessionIndex: 0 });
    panel.receive(wire);
    await panel.copied;
    assert.equal(await vscode.env.clipboard.readText(), path);
    // The webview cannot choose what is copied: a message with a path of its own does not parse.
    await vscode.env.clipboard.writeText('before');
    const copied = panel.copied;
    panel.receive({ type: MessageType.CopyPath, sessionIndex: 0, path: '/etc/passwd' });
    panel.receive({ type: MessageType.CopyPath, sessionIndex: 1 });
    assert.equal(panel.copied, copied);
    assert.equal(await vscode.env.clipboard.readText(), 'before');
  });

  it('follows the session file as it grows (live tail)', async () => {
    const a = await api();
    const dir = join(testEnv.tmp, 'live');
    mkdirSync(dir, { recursive: true });
    const lines = readFileSync(join(testEnv.home, PI_MAIN), 'utf8').split('\n');
    const file = join(dir, '2026-12-01T00-00-00-000Z_live.jsonl');
    // Lines 1–24: requests #1–#7; the rest arrives later, as an agent would write it.
    writeFileSync(file, `${lines.slice(0, 24).join('\n')}\n`);
    const first = await vscode.commands.executeCommand<{ requests: unknown[] }>('prefixLens.openTimeline', { path: file });
    assert.equal(first?.requests.length, 7);
    const panel = (await a.timelines()).get(file)!;
    await until('the first load', () => panel.loads >= 1, 60_000);
    appendFileSync(file, `${lines.slice(24, 35).join('\n')}\n`);
    // Lines 25–35 add requests #8 and #9.
    await until('the panel to reload with 9 requests', () => panel.current.requests.length === 9 && panel.loads >= 2, 30_000);
    assert.equal(panel.tailStats.opened, 1, 'the first change: the worker reads the session and keeps following it');
    appendFileSync(file, lines.slice(35).join('\n'));
    await until('the panel to reload with 13 requests', () => panel.current.requests.length === 13 && panel.loads >= 3, 30_000);
    assert.equal(panel.current.totals.breaks, 3);
    assert.equal(panel.tailStats.opened, 1, 'later changes continue from what the worker kept');
    // What the panel shows after the steps is what a full analysis of the file gives.
    assert.deepEqual(panel.current, await fullAnalysis(panel));
  });

  it('a long session grows by patches: once its token model is fitted, an append is judged alone and only its entries go to the webview', async function () {
    this.timeout(180_000);
    const a = await api();
    const dir = join(testEnv.tmp, 'live-long');
    mkdirSync(dir, { recursive: true });
    const source = join(dir, 'source.jsonl.txt');
    // 3,053 requests: well past the first 1,000 growth ratios the token model is fitted on (at
    // 1,970 requests of this shape it still moves, and every request is judged again).
    await writeSession(source, { bytes: 8_000_000, seed: 3, id: '019a0000-0000-7000-8000-00000000aaaa', cwd: '/home/dev/gen', startMs: Date.UTC(2026, 10, 5) });
    const text = readFileSync(source, 'utf8');
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
    const file = join(dir, '2026-11-05T00-00-00-000Z_019a0000-0000-7000-8000-00000000aaaa.jsonl');
    const cuts = [ends.length - 40, ends.length - 30, ends.length - 20, ends.length - 10].map((i) => ends[i]);
    writeFileSync(file, text.slice(0, cuts[0]));
    await vscode.commands.executeCommand('prefixLens.openTimeline', { path: file });
    const panel = (await a.timelines()).get(file)!;
    await until('the first load', () => panel.loads >= 1, 60_000);
    for (let i = 1; i < cuts.length; i++) {
      const before = panel.loads + panel.patchesPosted;
      appendFileSync(file, text.slice(cuts[i - 1], cuts[i]));
      await until(`step ${i} of the live tail to reach the webview`, () => panel.loads + panel.patchesPosted > before, 60_000);
    }
    assert.equal(panel.tailStats.opened, 1, 'read in full once, at the first change');
    // The first change reads the session in full (a load); the next two are appends judged alone (patches).
    assert.deepEqual([panel.loads, panel.patchesPosted], [2, 2]);
    // The Sessions view summarizing the followed session is answered from its live analysis (no
    // second full read); the change it took reaches the panel as the whole report.
    const loads = panel.loads;
    appendFileSync(file, text.slice(cuts.at(-1)));
    const summary = await a.worker.run({ op: 'analyze', ref: panel.ref, env: {}, overrides: { ttlSeconds: {}, prices: [] } }, { urgent: true });
    assert.equal(summary.sessions[0].requests.length, 3053);
    await until('the panel to show the last requests too', () => panel.current.requests.length === 3053 && panel.loads > loads, 60_000);
    assert.deepEqual([panel.loads, panel.patchesPosted, panel.tailStats.opened], [loads + 1, 2, 1]);
    assert.deepEqual(panel.current, await fullAnalysis(panel));
  });

  it('follows a Claude Code transcript as it grows, and joins captured bodies saved after it (live tail)', async () => {
    const a = await api();
    const id = '8aa2b6b2-f6a6-44e7-865a-838c950a6fc6';
    const fixture = join(testEnv.repo, 'test/fixtures/claude-code');
    const dir = join(testEnv.tmp, 'cc-live', 'projects', '-tmp-cc-live');
    mkdirSync(dir, { recursive: true });
    const lines = readFileSync(join(fixture, 'claude/projects/-tmp-prefix-lens-cc-lab-project', `${id}.jsonl`), 'utf8').split('\n');
    const file = join(dir, `${id}.jsonl`);
    // Lines 1–40: requests #1–#3 (no sub-agent folder: the main session alone).
    writeFileSync(file, `${lines.slice(0, 40).join('\n')}\n`);
    const root = captureRoots(process.env)[0];
    mkdirSync(root, { recursive: true });
    const first = await vscode.commands.executeCommand<{ requests: unknown[]; evidence: string }>('prefixLens.openTimeline', { path: file });
    assert.deepEqual([first?.requests.length, first?.evidence], [3, 'reconstructed']);
    const panel = (await a.timelines()).get(file)!;
    await until('the first load', () => panel.loads >= 1, 60_000);
    appendFileSync(file, lines.slice(40).join('\n'));
    await until('the panel to reload with 12 requests', () => panel.current.requests.length === 12, 30_000);
    assert.equal(panel.current.evidence, 'reconstructed');
    // The capture proxy saves the bodies (the main session's; 006 is the sub-agent's) after the transcript lines.
    const folder = join(root, `session-${id}`);
    mkdirSync(folder, { recursive: true });
    const bodies = readdirSync(join(fixture, 'requests')).filter((f) => !f.startsWith('006-'));
    for (const f of bodies.filter((b) => b.endsWith('.body.json'))) copyFileSync(join(fixture, 'requests', f), join(folder, f));
    for (const f of bodies.filter((b) => b.endsWith('.meta.json'))) copyFileSync(join(fixture, 'requests', f), join(folder, f));
    await until('the panel to reload in wire mode', () => panel.current.evidence === 'wire', 30_000);
    // The compaction's summary call is in the captures only: 13 requests.
    assert.equal(panel.current.requests.length, 13);
    rmSync(folder, { recursive: true, force: true });
  });

  it("follows a Codex fork's parent rollout: a parent back after the panel opened is read at the fork's next change; archived, then removed: read again each time (live tail)", async () => {
    const a = await api();
    const home = join(testEnv.tmp, 'codex-fork-live');
    cpSync(join(testEnv.repo, 'test/fixtures/codex-agents/codex'), home, { recursive: true });
    const day = join(home, 'sessions/2026/12/01');
    const parentName = 'rollout-2026-12-01T13-21-30-01a231c4-7b9f-70b3-9be5-8568513de12f.jsonl';
    const fork = join(day, 'rollout-2026-12-01T13-21-34-01a231c4-8c57-7e42-bdd1-a6aa99bf54c4.jsonl');
    const aside = join(testEnv.tmp, parentName);
    renameSync(join(day, parentName), aside);
    // Per request its verdict and messages blocks, and whether the 'parent not found' warning is there.
    const shown = (r: { requests: Array<{ verdict: string; segmentTable: Array<{ segment: string; blocks: number }> }>; diagnostics: Array<{ message: string }> }) => [
      ...r.requests.map((q) => `${q.verdict} ${q.segmentTable.find((t) => t.segment === 'messages')!.blocks}`),
      r.diagnostics.some((d) => d.message.includes('was not found beside it')) ? 'parent not found' : 'parent read',
    ];
    const WITHOUT = ['cold 1', 'break 3', 'parent not found'];
    const WITH = ['cold 14', 'break 16', 'parent read'];
    const first = await vscode.commands.executeCommand<Parameters<typeof shown>[0]>('prefixLens.openTimeline', { path: fork });
    assert.deepEqual(shown(first!), WITHOUT);
    const panel = (await a.timelines()).get(fork)!;
    await until('the first load', () => panel.loads >= 1, 60_000);
    // The parent is back; the fork writes a line (an agent message): read again with its parent.
    renameSync(aside, join(day, parentName));
    appendFileSync(fork, '{"timestamp":"2026-12-01T13:30:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"later"}}\n');
    await until('the panel to show the fork with its parent', () => JSON.stringify(shown(panel.current)) === JSON.stringify(WITH), 30_000);
    // Archived (the fork unchanged): read again, the parent found where it went.
    const loads = panel.loads;
    mkdirSync(join(home, 'archived_sessions'));
    renameSync(join(day, parentName), join(home, 'archived_sessions', parentName));
    await until('the panel to read the fork again', () => panel.loads > loads, 30_000);
    assert.deepEqual(shown(panel.current), WITH);
    // Removed from where it was archived to: the watch followed it there.
    rmSync(join(home, 'archived_sessions', parentName));
    await until('the panel to show the fork without its parent', () => JSON.stringify(shown(panel.current)) === JSON.stringify(WITHOUT), 30_000);
    panel.panel.dispose();
  });

  it('exports the standalone HTML report of a session (the same app and view model)', async () => {
    const path = join(testEnv.home, PI_MAIN);
    const to = vscode.Uri.file(join(testEnv.tmp, 'export.html'));
    const written = await vscode.commands.executeCommand<vscode.Uri>('prefixLens.exportHtml', { path }, to);
    assert.equal(written?.fsPath, to.fsPath);
    const html = readFileSync(to.fsPath, 'utf8');
    const data = new RegExp(`<script type="application/json" id="${REPORT_ELEMENT_ID}">([\\s\\S]*?)</script>`).exec(html);
    assert.ok(data, 'the report data element');
    const report = JSON.parse(data[1]);
    assert.deepEqual([report.version, report.sessions.length, report.sessions[0].requests.length, report.sessions[0].totals.breaks], [1, 1, 13, 3]);
  });

  it('"Reveal in transcript" opens the file at the request line', async () => {
    const path = join(testEnv.home, PI_MAIN);
    await vscode.commands.executeCommand('prefixLens.revealInTranscript', { path, line: 33 });
    const ed = vscode.window.activeTextEditor!;
    assert.equal(ed.document.uri.fsPath, path);
    assert.equal(ed.selection.active.line, 32);
  });
});
