import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { SessionsNode } from '../../src/extension/sessionsView.js';
import type { SessionRef } from '../../src/hosts/registry.js';
import { SummaryCache } from '../../src/extension/summaryCache.js';
import { ago } from '../../src/extension/format.js';
import { PI_LONG, PI_MAIN, api, sessionRow, sessionRows, testEnv, until } from './helpers.js';

/**
 * Every fixture session's row, in the view's order (hosts and sessions newest first, so sorted
 * here): [depth, label, description (age as AGE), accessible name]. Claude Code, Codex and
 * PI-Desktop list their sessions right under the host (depth 2, names cut to 22 characters); Pi
 * and OpenCode, with several projects, under a project (depth 3, 14 characters).
 */
const ROWS: Array<[number, string, string, string]> = [
  [2, 'Hello codex. Say hi.', '1 break · 61% hit · 9 req · AGE', 'Hello codex. Say hi.: 1 break, 61% cache hit rate, 9 requests, written AGE.'],
  [2, 'Hello. Say hi.', '1 break · 72% hit · 12 req · AGE', 'Hello. Say hi.: 1 break, 72% cache hit rate, 12 requests, written AGE.'],
  [2, 'Lexer delegate (flash)', '0 breaks · 50% hit · 3 req · AGE', 'Lexer delegate (flash): 0 breaks, 50% cache hit rate, 3 requests, written AGE.'],
  [2, 'Parser delegation', '6 breaks · 41% hit · 10 req · AGE', 'Parser delegation: 6 breaks, 41% cache hit rate, 10 requests, written AGE.'],
  [2, 'Parser review (Sonnet)', '1 break · 31% hit · 3 req · AGE', 'Parser review (Sonnet): 1 break, 31% cache hit rate, 3 requests, written AGE.'],
  [3, 'Hello with…', '1 break · 40% hit · 8 req · AGE', 'Hello with long cache retention.: 1 break, 40% cache hit rate, 8 requests, written AGE.'],
  [3, 'Recorded:…', '0 breaks · 64% hit · 6 req · AGE', 'Recorded: Hello, this is turn: 0 breaks, 64% cache hit rate, 6 requests, written AGE.'],
  [3, 'Recorded:…', '0 breaks · 80% hit · 5 req · AGE', 'Recorded: Anthropic turn one.: 0 breaks, 80% cache hit rate, 5 requests, written AGE.'],
  [3, 'Recorded:…', '1 break · 22% hit · 8 req · AGE', 'Recorded: Phux v1 turn one.: 1 break, 22% cache hit rate, 8 requests, written AGE.'],
  [3, 'Recorded:…', '1 break · 96% hit · 5 req · AGE', 'Recorded: Phux v2 turn one.: 1 break, 96% cache hit rate, 5 requests, written AGE.'],
  [3, 'Recorded:…', '2 breaks · 22% hit · 9 req · AGE', 'Recorded: Compaction session turn one.: 2 breaks, 22% cache hit rate, 9 requests, written AGE.'],
  [3, 'Scripted…', '0 breaks · 0% hit · 1 req · AGE', 'Scripted subtask (@general subagent): 0 breaks, 0% cache hit rate, 1 request, written AGE.'],
  [3, 'pi lab session', '3 breaks · 64% hit · 13 req · AGE', 'pi lab session: 3 breaks, 64% cache hit rate, 13 requests, written AGE.'],
];
/** The hover of the Pi main recording's row, unescaped (PATH = its file in the fixture home). */
const MAIN_TOOLTIP = [
  'pi lab session',
  '01a230ec-9a4e-7417-8af1-68d34234bdc8',
  '**13** requests · **3** breaks · hit rate **64%**',
  '| | tokens |\n|---|---:|\n| cache read | 19,124 |\n| cache write | 4,994 |\n| uncached | 5,971 |',
  'Re-billed by breaks: **0** tokens, **$0**',
  'PATH',
  'project /home/user/pi-lab/main/project',
].join('\n\n');
/** Markdown text as VS Code shows it: appendText's escapes and non-breaking spaces undone. */
const unescape = (md: string) => md.replaceAll('&nbsp;', ' ').replace(/\\([\\`*_{}[\]()#+\-.!<>|~])/g, '$1');
/** Host rows: label, description, what their children are, hover (plain text). */
const HOST_ROWS: string[][] = [
  ['Claude Code', '1 session · /tmp/prefix-lens-cc-lab/project', 'session', 'Claude Code: 1 session\nproject /tmp/prefix-lens-cc-lab/project'],
  ['Codex', '1 session · /tmp/prefix-lens-codex-lab/project', 'session', 'Codex: 1 session\nproject /tmp/prefix-lens-codex-lab/project'],
  ['OpenCode', '6 sessions', 'project', 'OpenCode: 6 sessions in 3 projects'],
  ['PI-Desktop', '3 sessions · /home/dev/work/parser', 'session', 'PI-Desktop: 3 sessions\nproject /home/dev/work/parser'],
  ['Pi', '2 sessions', 'project', 'Pi: 2 sessions in 2 projects'],
];

/** Children of a node, as the view gets them. */
async function children(node?: SessionsNode): Promise<SessionsNode[]> {
  return (await api()).sessions.getChildren(node);
}

/**
 * A row's hover as VS Code gets it: getTreeItem leaves it unset (a render builds no hover), and
 * the provider's resolveTreeItem fills it in on the item getTreeItem gave when the row is hovered.
 */
async function hover(node: SessionsNode): Promise<string | vscode.MarkdownString> {
  const provider: vscode.TreeDataProvider<SessionsNode> = (await api()).sessions;
  const item = await provider.getTreeItem(node);
  assert.equal(item.tooltip, undefined, 'getTreeItem built a hover');
  const resolved = (await provider.resolveTreeItem!(item, node, new vscode.CancellationTokenSource().token)) ?? item;
  assert.notEqual(resolved.tooltip, undefined, 'resolveTreeItem gave no hover');
  return resolved.tooltip!;
}

describe('Sessions view', () => {
  it('lists the fixture home: Pi (2 sessions in 2 projects), OpenCode (6), Claude Code (1), Codex (1), PI-Desktop (3)', async () => {
    const a = await api();
    await a.sessions.refresh();
    const hosts = await children();
    // Hosts are ordered by their newest session (copy times here), so compared by label.
    assert.deepEqual(
      hosts.map((h) => (h.kind === 'host' ? [h.label, h.refs.length] : [])).sort(),
      [
        ['Claude Code', 1],
        ['Codex', 1],
        ['OpenCode', 6],
        ['PI-Desktop', 3],
        ['Pi', 2],
      ],
    );
    const byLabel = (label: string) => hosts.find((h) => h.kind === 'host' && h.label === label)!;
    const piProjects = await children(byLabel('Pi'));
    assert.deepEqual(piProjects.map((p) => (p.kind === 'project' ? p.project : '')).sort(), ['/home/user/pi-lab/long/project', '/home/user/pi-lab/main/project']);
    const ocProjects = await children(byLabel('OpenCode'));
    assert.deepEqual(
      ocProjects.map((p) => (p.kind === 'project' ? [p.project, p.refs.length] : [])),
      [
        ['/tmp/prefix-lens-opencode-lab/proj', 4],
        ['/tmp/prefix-lens-opencode-lab/proj-phux-v2', 1],
        ['/tmp/prefix-lens-opencode-lab/proj-phux-v1', 1],
      ],
    );
  });

  it('analyzes each session lazily with the exact request and break counts of the recordings', async () => {
    const a = await api();
    const refs = await a.sessions.sessions();
    const sums = await a.sessions.summariesOf(refs);
    const got = Object.fromEntries(refs.map((r, i) => [r.host === 'pi' ? r.path.slice(testEnv.home.length + 1) : (r.title ?? `${r.host} ${r.id}`), [sums[i]?.requests, sums[i]?.breaks]]));
    assert.deepEqual(got, {
      [PI_MAIN]: [13, 3],
      [PI_LONG]: [8, 1],
      'Recorded: Hello, this is turn': [6, 0],
      'Recorded: Anthropic turn one.': [5, 0],
      'Scripted subtask (@general subagent)': [1, 0],
      'Recorded: Compaction session turn one.': [9, 2],
      'Recorded: Phux v1 turn one.': [8, 1],
      // #4: the read stops inside the opaque head (a01a221): a likely head break.
      'Recorded: Phux v2 turn one.': [5, 1],
      // test/fixtures/claude-code and codex (recorded from the real hosts) and pi-desktop (built).
      'claude-code 8aa2b6b2-f6a6-44e7-865a-838c950a6fc6': [12, 1],
      'codex 01a23123-dcf1-7130-9f87-2b10ef481a1c': [9, 1],
      'Parser delegation': [10, 6],
      'Lexer delegate (flash)': [3, 0],
      'Parser review (Sonnet)': [3, 1],
    });
  });

  it('shows each session as "title · N breaks · N% hit · N req · age" with a warning icon for breaks', async () => {
    const a = await api();
    const main = await sessionRow((r) => r.path.endsWith(PI_MAIN));
    const item = a.sessions.getTreeItem(main);
    assert.equal(item.label, 'pi lab session');
    assert.match(String(item.description), /^3 breaks · 64% hit · 13 req · /);
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'warning');
    const tip = ((await hover(main)) as vscode.MarkdownString).value;
    assert.match(tip, /cache read \| 19,124/);
    assert.match(tip, /cache write \| 4,994/);
    assert.match(tip, /uncached \| 5,971/);
    // Its compaction and branches send only new tokens after their change: nothing re-billed.
    assert.match(tip, /Re-billed by breaks: \*\*0\*\* tokens, \*\*\$0\*\*/);
    // The Claude Code /compact re-bills the tools and system after the billing header.
    const cc = await sessionRow((r) => r.host === 'claude-code' && r.id.startsWith('8aa2b6b2'));
    assert.match(((await hover(cc)) as vscode.MarkdownString).value, /Re-billed by breaks: \*\*19,213\*\* tokens, \*\*\$0\.07\*\*/);
    // Claude Code and Codex record no title: their sessions are named by the first prompt.
    for (const [host, prompt] of [['claude-code', 'Hello. Say hi.'], ['codex', 'Hello codex. Say hi.']]) {
      const row = await sessionRow((r) => r.host === host);
      assert.equal([row.ref.title, a.sessions.getTreeItem(row).label].join(' → '), ` → ${prompt}`);
    }
    const basic = await sessionRow((r) => r.title === 'Recorded: Anthropic turn one.');
    const ok = a.sessions.getTreeItem(basic);
    assert.match(String(ok.description), /^0 breaks · 80% hit · 5 req · /);
    assert.equal((ok.iconPath as vscode.ThemeIcon).id, 'pass');
  });

  it('puts breaks and hit rate first in every row (a 300 px side bar cuts the end; names cut to 22 characters right under a host, 14 under a project), the whole name in a Markdown hover and a one-sentence accessible name', async () => {
    const a = await api();
    const fixture = (r: SessionRef) => !r.path.startsWith(testEnv.tmp) && !/(new|growing|status|markdown)-project|status-\d/.test(r.path);
    await a.sessions.summariesOf((await a.sessions.sessions()).filter(fixture));
    const rows = (await sessionRows())
      .filter((n) => fixture(n.ref))
      .map((n) => {
        const item = a.sessions.getTreeItem(n);
        const when = ago(n.ref.mtimeMs);
        return [n.depth, String(item.label), String(item.description).replace(` · ${when}`, ' · AGE'), item.accessibilityInformation?.label.replace(`written ${when}.`, 'written AGE.')];
      })
      .sort((x, y) => (x.join('\n') < y.join('\n') ? -1 : 1));
    assert.deepEqual(rows, ROWS);
    const main = await sessionRow((r) => r.path.endsWith(PI_MAIN));
    const tip = (await hover(main)) as vscode.MarkdownString;
    assert.equal(unescape(tip.value).trimEnd(), MAIN_TOOLTIP.replace('PATH', main.ref.path));
    assert.deepEqual([tip.isTrusted, tip.supportHtml, tip.supportThemeIcons], [false, false, false]);
  });

  it('skips the project level of a host whose sessions share one project (Claude Code, Codex, PI-Desktop), and keeps it for Pi and OpenCode; a host row\'s hover is plain text, built when hovered', async () => {
    const a = await api();
    await a.sessions.refresh();
    const hosts = await children();
    const shape = await Promise.all(
      hosts.map(async (h) => {
        const item = a.sessions.getTreeItem(h);
        const kids = await children(h);
        return [item.label, String(item.description), [...new Set(kids.map((k) => k.kind))].join(), await hover(h)];
      }),
    );
    assert.deepEqual(shape.sort(), HOST_ROWS);
  });

  it('escapes a session title that holds Markdown, a command link, an icon and HTML: the hover shows it as text, links nothing', async () => {
    const a = await api();
    const dir = join(testEnv.home, '.pi/agent/sessions/--home-user-markdown-project--');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '2026-12-01T00-00-00-000Z_01a230ec-0000-7000-8000-000000000020.jsonl');
    const title = '[x](command:foo) **b** $(zap) <img src=x>';
    const text = readFileSync(join(testEnv.home, PI_MAIN), 'utf8').replace(/"id":"[0-9a-f-]{36}"/, '"id":"01a230ec-0000-7000-8000-000000000020"');
    writeFileSync(file, text.replace('"name":"pi lab session"', `"name":${JSON.stringify(title)}`).replaceAll('/home/user/pi-lab/main/project', '/home/user/markdown/project'));
    await a.sessions.refresh();
    const ref = await until('the session to be listed', async () => (await a.sessions.sessions()).find((r) => r.path === file), 30_000);
    await a.sessions.summariesOf([ref]);
    // Under a project (Pi lists several): cut to 14 characters, mid-word (no space in the first half).
    const row = await sessionRow((r) => r.path === file);
    assert.equal(row.depth, 3);
    const item = a.sessions.getTreeItem(row);
    assert.equal(item.label, '[x](command:f…');
    const tip = (await hover(row)) as vscode.MarkdownString;
    assert.deepEqual([tip.isTrusted, tip.supportHtml, tip.supportThemeIcons], [false, false, false]);
    const first = tip.value.split('\n\n')[0];
    assert.equal(first, '\\[x\\]\\(command:foo\\)&nbsp;\\*\\*b\\*\\*&nbsp;$\\(zap\\)&nbsp;\\<img&nbsp;src=x\\>');
    assert.equal(item.accessibilityInformation?.label, `${title}: 3 breaks, 64% cache hit rate, 13 requests, written ${ago(ref.mtimeMs)}.`);
  });

  it('caches summaries across restarts by size + mtime + content check, for the same build and rule overrides', async () => {
    const a = await api();
    await a.cache.save();
    const refs = await a.sessions.sessions();
    const main = refs.find((r) => r.path.endsWith(PI_MAIN))!;
    const fresh = new SummaryCache(a.cache.file.replace(/[/\\][^/\\]+$/, ''), a.cache.basis);
    assert.equal((await fresh.get(main))?.breaks, 3, 'a new cache over the saved file knows the session');
    // Another build or other rule overrides (TTLs, prices): the summary is computed again.
    assert.match(a.cache.basis(), /^\d+\.\d+\.\d+:\{"ttlSeconds":\{\},"prices":\[\]\}$/);
    const other = new SummaryCache(a.cache.file.replace(/[/\\][^/\\]+$/, ''), () => `${a.cache.basis()}+ttl`);
    assert.equal(await other.get(main), undefined);
    // Same size and mtime, different bytes in the tail: the content check refuses the entry.
    const dir = join(testEnv.tmp, 'cache-check');
    mkdirSync(dir, { recursive: true });
    const copy = join(dir, 'copy.jsonl');
    copyFileSync(main.path, copy);
    // Whole seconds, so setting the same mtime again below is exact.
    utimesSync(copy, 1_796_000_000, 1_796_000_000);
    const st = statSync(copy);
    const ref = { ...main, key: copy, path: copy, mtimeMs: st.mtimeMs, size: st.size };
    await fresh.set(ref, (await fresh.get(main))!);
    assert.equal((await fresh.get(ref))?.breaks, 3);
    const bytes = readFileSync(copy);
    bytes[bytes.length - 3] = bytes[bytes.length - 3] === 0x30 ? 0x31 : 0x30;
    writeFileSync(copy, bytes);
    utimesSync(copy, 1_796_000_000, 1_796_000_000);
    const st2 = statSync(copy);
    assert.equal(st2.size, st.size);
    assert.equal(st2.mtimeMs, st.mtimeMs);
    assert.equal(await fresh.get({ ...ref, mtimeMs: st2.mtimeMs }), undefined);
  });

  it('refreshes (debounced) when a session file appears in a watched folder', async () => {
    const a = await api();
    const dir = join(testEnv.home, '.pi/agent/sessions/--home-user-new-project--');
    mkdirSync(dir, { recursive: true });
    const before = a.sessions.lastListing;
    const listed = (await a.sessions.sessions()).length;
    copyFileSync(join(testEnv.home, PI_LONG), join(dir, '2026-12-01T00-00-00-000Z_01a230ec-0000-7000-8000-000000000001.jsonl'));
    await until('the Sessions view to list the new file', async () => a.sessions.lastListing !== before && (await a.sessions.sessions()).length === listed + 1, 20_000);
  });

  it("updates a growing session's summary in place (an agent appending to its transcript), without re-listing by hand", async () => {
    const a = await api();
    const dir = join(testEnv.home, '.pi/agent/sessions/--home-user-growing-project--');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '2026-12-01T00-00-00-000Z_01a230ec-0000-7000-8000-000000000002.jsonl');
    // Its own id and project, so that no other test takes it for the main recording.
    const text = readFileSync(join(testEnv.home, PI_MAIN), 'utf8').replace(/"id":"[0-9a-f-]{36}"/, '"id":"01a230ec-0000-7000-8000-000000000002"');
    const lines = text.replaceAll('/home/user/pi-lab/main/project', '/home/user/pi-lab/growing/project').split('\n');
    // The first 15 of the main recording's 45 lines hold its first 4 requests (no break yet).
    writeFileSync(file, lines.slice(0, 15).join('\n') + '\n');
    const describe = async () => {
      const row = (await sessionRows()).find((r) => r.ref.path === file);
      return row && String(a.sessions.getTreeItem(row).description);
    };
    await until('the new session to be listed with 4 requests', async () => /^0 breaks · \d+% hit · 4 req · /.test((await describe()) ?? ''), 30_000);
    appendFileSync(file, lines.slice(15).join('\n'));
    // While it is recomputed, the row keeps the previous figures (never back to "analyzing…").
    const seen = new Set<string>();
    await until('the row to show the whole recording: 13 requests, 3 breaks', async () => {
      const d = (await describe()) ?? '';
      seen.add(d.replace(/ · [^·]*$/, ''));
      return /^3 breaks · 64% hit · 13 req · /.test(d);
    }, 30_000);
    assert.deepEqual([...seen].filter((d) => !/^(0 breaks · \d+% hit · 4 req|3 breaks · 64% hit · 13 req)$/.test(d)), []);
  });

  it('names the session being written in the status bar with its hit rate and breaks (warning colours while its latest request broke the cache); a click opens its Timeline at that break', async () => {
    const a = await api();
    const dir = join(testEnv.home, '.pi/agent/sessions/--home-user-status-project--');
    mkdirSync(dir, { recursive: true });
    const copy = (fixture: string, n: number) => {
      const file = join(dir, `2026-12-01T00-00-0${n}-000Z_01a230ec-0000-7000-8000-00000000001${n}.jsonl`);
      const text = readFileSync(join(testEnv.home, fixture), 'utf8').replace(/"id":"[0-9a-f-]{36}"/, `"id":"01a230ec-0000-7000-8000-00000000001${n}"`);
      writeFileSync(file, text.replaceAll('/home/user/pi-lab/', `/home/user/status-${n}/`));
      return file;
    };
    // The main recording: 13 requests, 3 breaks, 64 % hit; #13 is a break that re-billed nothing
    // (back on gpt-5 on another branch: what follows the branch point is new to the cache).
    const main = copy(PI_MAIN, 1);
    await until('the status bar to show the main copy', () => a.status.shown?.path === main && a.status.text === '$(warning) pi lab session · 64% hit · 3 breaks', 30_000);
    assert.equal(a.status.warning, true);
    assert.match(a.status.tooltip, /\*\*13\*\* requests · \*\*3\*\* breaks · hit rate \*\*64%\*\*/);
    assert.match(a.status.tooltip, /The latest request, #13, broke the cache: nothing the cache held was billed again\./);
    assert.match(a.status.tooltip, /Click to open its Timeline at request #13\.$/);
    // appendText writes the spaces of the (untrusted) title and path as &nbsp;.
    assert.match(a.status.tooltip.replaceAll('&nbsp;', ' '), /pi lab session\n\nPi · \/home\/user\/status-1\/main\/project · written just now\n/);
    // The click: the Timeline of that session at the latest request (the break the colours point at), not at its first break (#9).
    const click = a.status.command!;
    assert.equal(click.command, 'prefixLens.openTimeline');
    await vscode.commands.executeCommand(click.command, ...(click.arguments ?? []));
    const panel = (await a.timelines()).get(a.status.shown!.key);
    await until('the Timeline to select request #13', () => panel?.selectedRequest === 13, 30_000);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // A newer session takes the item: the long recording ends on a model switch (not a break); its
    // first prompt names it, cut at a word to at most 24 characters.
    const long = copy(PI_LONG, 2);
    await until('the status bar to follow the newer session', () => a.status.shown?.path === long && a.status.text === '$(pulse) Hello with long cache… · 40% hit · 1 break', 30_000);
    assert.equal(a.status.warning, false);
    assert.match(a.status.tooltip, /Click to open its Timeline\.$/);
    assert.deepEqual(a.status.command?.arguments, [a.status.shown]);
    const report = (await vscode.commands.executeCommand('prefixLens.openTimeline', a.status.shown)) as { path: string; totals: { requests: number } } | undefined;
    assert.equal(report?.path, long);
    assert.equal(report?.totals.requests, 8);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // A newer session whose title holds a command link, Markdown, an icon and HTML: the tooltip
    // shows it as text (its own $(warning) icon is the only one).
    const title = '[x](command:foo) **b** $(zap) <img src=x>';
    const hostile = copy(PI_MAIN, 3);
    writeFileSync(hostile, readFileSync(hostile, 'utf8').replace('"name":"pi lab session"', `"name":${JSON.stringify(title)}`));
    await until('the status bar to follow the titled session', () => a.status.shown?.path === hostile && /breaks$/.test(a.status.text), 30_000);
    const tip = a.status.tooltip;
    const named = tip.split('\n\n')[1];
    assert.ok(named.includes('\\<img&nbsp;src=x\\>'), named);
    assert.doesNotMatch(tip, /(^|[^\\])<img/);
    assert.doesNotMatch(tip, /(^|[^\\])\]\(command:foo/);
    assert.doesNotMatch(tip, /(^|[^\\])\$\(zap\)/);
    assert.match(tip, /\$\(warning\) The latest request, #13, broke the cache/);
  });
});

