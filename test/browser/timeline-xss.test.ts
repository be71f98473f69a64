/**
 * Untrusted strings in the timeline: a recorded Pi session edited so that its model, cwd, message
 * texts and file name carry HTML/script payloads (analyzed through the real reader), then its
 * report edited further so tool names (a tools-changed cause), phux labels (an ADR-0067
 * violation), a persona event, a diagnostic, a note and an error carry them too. The payloads
 * must show literally, inject no element, and run nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildReport } from '../../src/cli/main.js';
import { htmlReport, loadWebviewAssets } from '../../src/report/html.js';
import type { Report } from '../../src/report/json.js';
import { artifacts, launch, type TestBrowser } from './browser.js';

const PI_MAIN_DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';

/** Each payload sets a distinct global if it ever runs. */
const P = {
  img: '<img src=x onerror="window.__xss=1">',
  script: '<script>window.__xss=2</script>',
  svg: '"><svg onload=window.__xss=3>',
  close: '</script><script>window.__xss=4</script><!--',
  iframe: "<iframe srcdoc='<script>parent.__xss=5</script>'></iframe>",
  style: '<style>body{display:none}</style><b onclick=alert(1)>bold</b>',
};

/** Deep-replaces strings of a parsed JSONL entry. */
function edit(v: unknown, f: (s: string, key: string) => string, key = ''): unknown {
  if (typeof v === 'string') return f(v, key);
  if (Array.isArray(v)) return v.map((x) => edit(x, f, key));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, edit(x, f, k)]));
  return v;
}

describe('timeline: untrusted strings stay text (XSS)', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let dir: string;
  let report: Report;
  let file: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-xss-'));
    const src = join(PI_MAIN_DIR, readdirSync(PI_MAIN_DIR).find((f) => f.endsWith('.jsonl'))!);
    const lines = readFileSync(src, 'utf8').split('\n').filter(Boolean);
    const edited = lines.map((line) =>
      JSON.stringify(
        edit(JSON.parse(line), (s, key) => {
          if (key === 'cwd') return `/home/user/${P.svg}`;
          if ((key === 'model' || key === 'modelId') && s === 'claude-sonnet-4-5') return `claude-sonnet-4-5${P.img}`;
          if (key === 'text' && s === 'Hello pi. Say hi.') return `Hello pi. ${P.script} ${P.close} Say hi.`;
          if (key === 'text' && s.startsWith('Please read hello.txt')) return `${P.iframe} ${s}`;
          return s;
        }),
      ),
    );
    const sessionFile = join(dir, `session-${P.svg.replace(/\//g, '')}.jsonl`);
    writeFileSync(sessionFile, `${edited.join('\n')}\n`);
    const built = await buildReport([sessionFile], undefined, process.cwd());
    assert.deepEqual(built.errors, []);
    report = built.report;
    const s = report.sessions[0];
    assert.equal(s.requests.length, 13, 'the edited recording still has its 13 agent requests (reconstructed)');
    assert.ok(s.models.some((m) => m.includes(P.img)), 'the model payload reached the report through the reader');
    // Fields no transcript edit reaches in reconstructed mode: tool names (wire-mode causes),
    // phux labels (violation messages), persona, diagnostics, notes, errors, the title.
    s.title = `title ${P.close}`;
    const compaction = s.requests[8];
    assert.equal(compaction.verdict, 'break');
    compaction.causes.push({ kind: 'tools-changed', detail: `tool \`bash${P.img}\` schema bytes`, certainty: 'certain' });
    compaction.notes.push(`note ${P.style}`);
    s.requests[4].error = `error ${P.script}`;
    s.diagnostics.push({ file: `${dir}/${P.iframe}`, line: 3, message: `diagnostic ${P.svg}`, severity: 'warning' });
    assert.ok(s.phux, 'the Pi main recording carries a phux context stream');
    const m = s.phux!.messages.find((x) => x.request === 9)!;
    s.phux!.violations.push({ rule: 'invalid-message', line: m.line, message: `pane label ${P.img} ${P.script}` });
    s.persona = {
      snapshot: { state: 'body', hash: 'abcdef012345', takenAt: null, botSlug: `bot${P.svg}`, bytes: 10 },
      verdict: 'drift',
      events: [{ request: 9, line: 30, kind: 'drift', hash: 'abcdef012345', detail: `persona ${P.style}`, offset: 3, before: `soul ${P.iframe}`, after: `soul ${P.img}` }],
      notes: [],
    };
    file = join(artifacts('reports'), 'xss.html');
    writeFileSync(file, await htmlReport(report, loadWebviewAssets('dist')));
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows every payload literally, injects no element and runs nothing', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(file).href);
    const list = page.getByRole('listbox', { name: 'Requests' });
    await list.waitFor();
    assert.equal(await list.getByRole('option').count(), 13);

    const texts: string[] = [];
    const collect = async () => texts.push((await page.evaluate(() => document.body.innerText + '\n' + document.body.textContent)) ?? '');
    await collect();
    await page.getByRole('option', { name: /^Request 9: break/ }).click();
    await collect();
    await page.getByRole('option', { name: /^Request 5:/ }).click();
    await collect();
    const all = texts.join('\n');
    for (const [name, payload] of [
      ['title (data element close)', `title ${P.close}`],
      ['model', `claude-sonnet-4-5${P.img}`],
      ['cwd/file name', P.svg.replace(/\//g, '')],
      ['tool name', `bash${P.img}`],
      ['phux label', `pane label ${P.img} ${P.script}`],
      ['persona', `persona ${P.style}`],
      ['persona before', `soul ${P.iframe}`],
      ['persona after', `soul ${P.img}`],
      ['diagnostic', `diagnostic ${P.svg}`],
      ['note', `note ${P.style}`],
      ['error', `error ${P.script}`],
      ['message text (break excerpt)', P.script],
    ] as const) {
      assert.ok(all.includes(payload), `${name} shows literally: ${payload}`);
    }
    assert.equal(await page.title(), `Prefix Lens — title ${P.close}`);

    const dom = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: number }).__xss ?? null,
      injected: document.querySelectorAll('img, svg, iframe, b, body style, #prefix-lens-app script, #prefix-lens-app style').length,
      scripts: document.scripts.length,
      handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
      hidden: getComputedStyle(document.body).display,
    }));
    assert.deepEqual(dom, { xss: null, injected: 0, scripts: 2, handlers: 0, hidden: 'block' });
    await page.screenshot({ path: join(artifacts('screenshots'), 'timeline-xss.png'), fullPage: true });
    assert.deepEqual(browser.pageErrors, [], 'nothing even tried to run: no CSP violation, no page error');
    await page.close();
  });
});
