/**
 * A usage number or a time a host wrote that is not one — a string "12", -5, null, 1e400
 * (Infinity after JSON.parse), a huge value — is read the same way by every host reader: the line
 * (or row) is still analyzed, the field is unknown (a usage field null, never 0, left out of the
 * totals; a time unknown), and one warning at its file and line names the field and its value as
 * written (numbers.ts checkHostValues). Each case copies one recording into a temp dir (the
 * fixtures are never edited), changes one value of one request's line, and compares the report
 * with the untouched copy's: same requests, that one diagnostic more, the totals less exactly that
 * field's tokens (hit rate over the requests whose prompt stays known), the other requests as
 * recorded.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { runCli } from '../hostile/harness.js';
import { editedDb, openFixture, query, writeLegacyStorage } from '../opencode/helpers.js';

type Usage = { uncached: number | null; cacheRead: number | null; cacheWrite: number | null; output: number | null };
type Diag = { file: string; line: number; severity: string; message: string };
type Req = { line: number; row?: string; file: string; time: string | null; usage: Usage | null; verdict: string; costUSD: number | null; lostTokens: number };
type Totals = Record<'requests' | 'breaks' | 'cacheRead' | 'cacheWrite' | 'uncached' | 'output' | 'lostTokens' | 'costUSD', number> & { hitRate: number | null };
type Sess = { host: string; path: string; diagnostics: Diag[]; totals: Totals; requests: Req[] };

async function analyze(arg: string): Promise<Sess[]> {
  const r = await runCli(['analyze', '--json', '--no-cache', arg]);
  assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.err}`);
  return (JSON.parse(r.out) as { sessions: Sess[] }).sessions;
}

const COUNT_RULE = 'is not a token count (a non-negative integer ≤ 1000000000000)';
const MS_RULE = 'is not a time (ms since epoch, at most 8.64e15 from it)';
const ISO_RULE = 'is not a time (a date string)';
const FIELDS = ['uncached', 'cacheRead', 'cacheWrite', 'output'] as const;

/** Bad token counts: the JSON text written, and how the diagnostic shows it. */
const BAD_COUNTS: Array<[string, string]> = [
  ['"12"', '"12"'],
  ['-5', '-5'],
  ['null', 'null'],
  ['1e400', 'Infinity'],
  ['1000000000000001', '1000000000000001'],
];
/** Bad ms times. */
const BAD_MS: Array<[string, string]> = [
  ['"yesterday"', '"yesterday"'],
  ['null', 'null'],
  ['1e400', 'Infinity'],
  ['1e20', '100000000000000000000'],
];
/** Bad ISO times. */
const BAD_ISO: Array<[string, string]> = [
  ['12', '12'],
  ['"yesterday"', '"yesterday"'],
  ['null', 'null'],
];

/** Replaces the first match of `re` (its group 1) in line `n` (1-based) of `text`. */
function replaceInLine(text: string, n: number, re: RegExp, by: string): string {
  const lines = text.split('\n');
  const m = re.exec(lines[n - 1]);
  assert.ok(m, `line ${n} has ${re}`);
  const at = m.index + m[0].indexOf(m[1]);
  lines[n - 1] = lines[n - 1].slice(0, at) + by + lines[n - 1].slice(at + m[1].length);
  return lines.join('\n');
}

function firstFile(dir: string, suffix: string): string {
  return join(dir, readdirSync(dir).find((n) => n.endsWith(suffix))!);
}

/** One host's JSONL recording: the file copied, the line changed and what the change makes unknown. */
interface LineCase {
  host: string;
  fixture: string;
  /** 1-based line changed and the value's pattern there (group 1 = the value). */
  line: number;
  pattern: RegExp;
  /** The value's path as the diagnostic names it. */
  path: string;
  /** 0-based request (of the file's first session) whose usage comes from that line. */
  request: number;
  /** Normalized usage fields that become unknown. */
  unknown: Array<(typeof FIELDS)[number]>;
  /** The folder copied with it (the file's place in it: `fixture` relative to it), when the reader reads beside the file. */
  home?: string;
  /** What the diagnostic says the value is not (default: a token count). */
  rule?: string;
  /** Totals of re-billed tokens and their cost when they move (see checkCount), measured. */
  money?: { costUSD: number; lostTokens: number };
}

const PI = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const CODEX = 'test/fixtures/codex/codex/sessions/2026/12/01';
const CLAUDE = 'test/fixtures/claude-code/claude/projects/-tmp-prefix-lens-cc-lab-project/8aa2b6b2-f6a6-44e7-865a-838c950a6fc6.jsonl';
const PI_DESKTOP_HOME = 'test/fixtures/pi-desktop/home';
const PI_DESKTOP = `${PI_DESKTOP_HOME}/sessions/b24d9e07-3f6a-4b1c-8e2d-5a7c9f1e3b42.jsonl`;
const BOTHARNESS = 'test/fixtures/botharness/fresh-round-trip/session.jsonl';

const COUNT_CASES: LineCase[] = [
  // Request #3 (line 9): usage.cacheRead 1536 (the first "cacheRead" of the line; cost.cacheRead follows).
  { host: 'pi', fixture: firstFile(PI, '.jsonl'), line: 9, pattern: /"cacheRead":(\d+)/, path: 'message.usage.cacheRead', request: 2, unknown: ['cacheRead'] },
  // Request #2 (line 21) has its usage on line 23 (token_usage_record); uncached = input − cached: unknown too.
  { host: 'codex', fixture: firstFile(CODEX, '.jsonl'), line: 23, pattern: /"cached_input_tokens":(\d+)/, path: 'payload.usage.cached_input_tokens', request: 1, unknown: ['cacheRead', 'uncached'] },
  // The break of request #9 re-bills a little more: its estimate is calibrated on one fewer prompt.
  {
    host: 'claude-code',
    fixture: CLAUDE,
    line: 33,
    pattern: /"cache_read_input_tokens":(\d+)/,
    path: 'message.usage.cache_read_input_tokens',
    request: 1,
    unknown: ['cacheRead'],
    money: { costUSD: 0.06633315000000001, lostTokens: 19227 },
  },
  { host: 'botharness', fixture: BOTHARNESS, line: 29, pattern: /"cacheReadTokens":(\d+)/, path: 'data.usage.cacheReadTokens', request: 1, unknown: ['cacheRead'] },
  // A cost: Pi's prices come from usage.cost, this request's cacheRead rate then from the session's other requests (the same model's fixed rate): nothing else moves.
  {
    host: 'pi',
    fixture: firstFile(PI, '.jsonl'),
    line: 9,
    pattern: /"cacheRead":(0\.\d+)/,
    path: 'message.usage.cost.cacheRead',
    request: 2,
    unknown: [],
    rule: 'is not a cost in USD (a finite non-negative number ≤ 1000000000)',
  },
  { host: 'pi-desktop', fixture: PI_DESKTOP, home: PI_DESKTOP_HOME, line: 8, pattern: /"cacheRead":(\d+)/, path: 'meta.usage.cacheRead', request: 1, unknown: ['cacheRead'] },
];

/**
 * What a case must give: the same requests, one diagnostic more, the changed request's unknown
 * fields null and the rest as recorded, the totals less exactly those fields' tokens.
 */
function checkCount(base: Sess, got: Sess, request: number, unknown: readonly string[], diag: Diag, money?: { costUSD: number; lostTokens: number }): void {
  if (process.env.LENIENT_PRINT) console.log('MONEY', base.totals.costUSD, base.totals.lostTokens, got.totals.costUSD, got.totals.lostTokens);
  assert.equal(got.requests.length, base.requests.length);
  assert.equal(got.totals.requests, base.totals.requests);
  const seen = new Set(base.diagnostics.map((d) => JSON.stringify(d)));
  assert.deepEqual(
    got.diagnostics.filter((d) => !seen.has(JSON.stringify(d))),
    [diag],
  );
  assert.equal(got.diagnostics.length, base.diagnostics.length + 1);
  const u0 = base.requests[request].usage!;
  const want: Usage = { ...u0 };
  for (const k of unknown) want[k as keyof Usage] = null;
  assert.deepEqual(got.requests[request].usage, want);
  // Its verdict too: the other requests calibrate the token model, so its prompt size stays known well enough (never below the minimum from a guess).
  assert.equal(got.requests[request].verdict, base.requests[request].verdict);
  assert.deepEqual(
    got.requests.map((r, i) => (i === request ? null : [r.line, r.usage, r.verdict])),
    base.requests.map((r, i) => (i === request ? null : [r.line, r.usage, r.verdict])),
  );
  for (const k of FIELDS) assert.equal(got.totals[k], base.totals[k] - (unknown.includes(k) ? u0[k]! : 0), `totals.${k}`);
  // Hit rate: cacheRead / prompt over the requests whose prompt is known (every one of the recording has it whole).
  const promptUnknown = unknown.some((k) => k !== 'output');
  const prompt = base.totals.cacheRead + base.totals.cacheWrite + base.totals.uncached - (promptUnknown ? u0.cacheRead! + u0.cacheWrite! + u0.uncached! : 0);
  const read = base.totals.cacheRead - (promptUnknown ? u0.cacheRead! : 0);
  assert.equal(got.totals.hitRate, read / prompt);
  // Re-billed tokens and their cost are estimates from the token model, which is calibrated on the
  // requests with a known prompt: with one fewer, a break's estimate can move (`money`, measured).
  assert.equal(got.totals.costUSD, money ? money.costUSD : base.totals.costUSD);
  assert.equal(got.totals.lostTokens, money ? money.lostTokens : base.totals.lostTokens);
}

/** One host's time field: the line changed, and the changed request's time then (`same`: as recorded). */
interface TimeCase {
  host: string;
  fixture: string;
  home?: string;
  line: number;
  pattern: RegExp;
  path: string;
  kind: 'ms' | 'iso';
  request: number;
  time: string | null | 'same';
}

const TIME_CASES: TimeCase[] = [
  // Pi's request time is message.timestamp (taken before the HTTP request); unknown, it is the entry's (the response's end), as when absent.
  { host: 'pi', fixture: firstFile(PI, '.jsonl'), line: 9, pattern: /"timestamp":(\d+)/, path: 'message.timestamp', kind: 'ms', request: 2, time: '2026-12-01T09:25:48.039Z' },
  // The entry's own time only bounds the response's end.
  { host: 'pi', fixture: firstFile(PI, '.jsonl'), line: 9, pattern: /^\{"type":"message","id":"[^"]*","parentId":"[^"]*","timestamp":("[^"]*")/, path: 'timestamp', kind: 'iso', request: 2, time: 'same' },
  { host: 'codex', fixture: firstFile(CODEX, '.jsonl'), line: 21, pattern: /"timestamp":("[^"]*")/, path: 'timestamp', kind: 'iso', request: 1, time: null },
  // Claude Code 2.1.3xx times a request by its api-request line (31 for request #2).
  { host: 'claude-code', fixture: CLAUDE, line: 31, pattern: /"timestamp":("[^"]*")/, path: 'timestamp', kind: 'iso', request: 1, time: null },
  // BotHarness times a request by its step's start (step/start, line 5); unknown, by its message's time (line 15).
  { host: 'botharness', fixture: BOTHARNESS, line: 5, pattern: /"time":(\d+)/, path: 'time', kind: 'ms', request: 0, time: new Date(1784973851498).toISOString() },
  // PI-Desktop times a request by the last row before it with a time: line 7's system row; unknown, line 5's (as when absent).
  { host: 'pi-desktop', fixture: PI_DESKTOP, home: PI_DESKTOP_HOME, line: 7, pattern: /"createdAt":("[^"]*")/, path: 'createdAt', kind: 'iso', request: 1, time: '2026-11-20T09:00:05.000Z' },
];

/** A time case: the same requests and usage, the given diagnostics more, the changed request's time as given, the others' as recorded. */
function checkTime(base: Sess, got: Sess, request: number, time: string | null | 'same', diags: Diag[]): void {
  if (process.env.LENIENT_PRINT) console.log('TIME', base.requests[request].time, got.requests[request].time, JSON.stringify(got.diagnostics.slice(-2)));
  assert.equal(got.requests.length, base.requests.length);
  const seen = new Set(base.diagnostics.map((d) => JSON.stringify(d)));
  assert.deepEqual(
    got.diagnostics.filter((d) => !seen.has(JSON.stringify(d))),
    diags,
  );
  assert.equal(got.diagnostics.length, base.diagnostics.length + diags.length);
  assert.equal(got.requests[request].time, time === 'same' ? base.requests[request].time : time);
  assert.deepEqual(
    got.requests.map((r, i) => [r.line, r.row, r.usage, i === request ? null : r.time]),
    base.requests.map((r, i) => [r.line, r.row, r.usage, i === request ? null : r.time]),
  );
  for (const k of FIELDS) assert.equal(got.totals[k], base.totals[k], `totals.${k}`);
}

describe('usage numbers and times a host wrote that are not numbers: every reader, field by field', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-lenient-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [n, c] of COUNT_CASES.entries()) {
    describe(`${c.host}: ${c.path} of line ${c.line}`, () => {
      let base: Sess;
      let original: string;
      let file: string;
      before(async () => {
        original = readFileSync(c.fixture, 'utf8');
        // The file's own name in a folder of its own (a reader may go by it: BotHarness's session.jsonl).
        if (c.home) {
          cpSync(c.home, join(dir, `count-${n}`), { recursive: true });
          file = join(dir, `count-${n}`, relative(c.home, c.fixture));
        } else {
          mkdirSync(join(dir, `count-${n}`));
          file = join(dir, `count-${n}`, basename(c.fixture));
        }
        writeFileSync(file, original);
        base = (await analyze(file))[0];
        assert.equal(base.requests[c.request].line, c.host === 'codex' ? 21 : c.line);
      });
      for (const [bad, shown] of BAD_COUNTS) {
        it(`${bad}: same requests, that field unknown with one warning at line ${c.line}, ${c.unknown.length ? 'totals less its tokens' : 'totals as recorded'}`, async () => {
          writeFileSync(file, replaceInLine(original, c.line, c.pattern, bad));
          const got = (await analyze(file))[0];
          checkCount(base, got, c.request, c.unknown, { file, line: c.line, severity: 'warning', message: `values taken as unknown: ${c.path} ${shown} ${c.rule ?? COUNT_RULE}` }, c.money);
        });
      }
    });
  }

  for (const [n, c] of TIME_CASES.entries()) {
    describe(`${c.host}: ${c.path} (a time) of line ${c.line}`, () => {
      let base: Sess;
      let original: string;
      let file: string;
      before(async () => {
        original = readFileSync(c.fixture, 'utf8');
        if (c.home) {
          cpSync(c.home, join(dir, `time-${n}`), { recursive: true });
          file = join(dir, `time-${n}`, relative(c.home, c.fixture));
        } else {
          mkdirSync(join(dir, `time-${n}`));
          file = join(dir, `time-${n}`, basename(c.fixture));
        }
        writeFileSync(file, original);
        base = (await analyze(file))[0];
      });
      for (const [bad, shown] of c.kind === 'ms' ? BAD_MS : BAD_ISO) {
        it(`${bad}: same requests, one warning at line ${c.line}, request #${c.request + 1}'s time ${c.time === null ? 'unknown' : c.time === 'same' ? 'as recorded' : c.time}`, async () => {
          writeFileSync(file, replaceInLine(original, c.line, c.pattern, bad));
          const got = (await analyze(file))[0];
          checkTime(base, got, c.request, c.time, [{ file, line: c.line, severity: 'warning', message: `values taken as unknown: ${c.path} ${shown} ${c.kind === 'ms' ? MS_RULE : ISO_RULE}` }]);
        });
      }
    });
  }

  describe('opencode database: tokens.cache.read of the second request’s message row', () => {
    let base: Sess;
    let row: string;
    let data: string;
    before(async () => {
      const db = await openFixture();
      const first = (await analyze('test/fixtures/opencode/opencode.db'))[0];
      row = first.requests[1].row!;
      data = String(query(db, `SELECT data FROM message WHERE id = '${row.slice('message:'.length)}'`)[0].data);
      db.close();
      assert.match(data, /"read":7424\}/);
      mkdirSync(join(dir, 'oc-base'));
      base = (await analyze(await editedDb(join(dir, 'oc-base'), [])))[0];
      assert.equal(base.requests[1].row, row);
    });
    for (const [bad, shown] of BAD_COUNTS) {
      it(`${bad}: same requests, cacheRead unknown with one warning at the row, totals less its tokens`, async () => {
        const changed = data.replace(/"read":7424\}/, `"read":${bad}}`).replace(/'/g, "''");
        const sub = join(dir, `oc-${BAD_COUNTS.findIndex(([b]) => b === bad)}`);
        mkdirSync(sub);
        const db = await editedDb(sub, [`UPDATE message SET data = '${changed}' WHERE id = '${row.slice('message:'.length)}'`]);
        const got = (await analyze(db))[0];
        checkCount(base, got, 1, ['cacheRead'], { file: db, line: 0, severity: 'warning', message: `row ${row}: values taken as unknown: tokens.cache.read ${shown} ${COUNT_RULE}` });
      });
    }
  });

  describe('opencode database: time.created of the second request’s message row', () => {
    let base: Sess;
    let row: string;
    let data: string;
    before(async () => {
      mkdirSync(join(dir, 'oc-time-base'));
      base = (await analyze(await editedDb(join(dir, 'oc-time-base'), [])))[0];
      row = base.requests[1].row!;
      const db = await openFixture();
      data = String(query(db, `SELECT data FROM message WHERE id = '${row.slice('message:'.length)}'`)[0].data);
      db.close();
      assert.match(data, /"time":\{"created":\d+,/);
    });
    for (const [n, [bad, shown]] of BAD_MS.entries()) {
      it(`${bad}: same requests (the rows are ordered by the time_created column), one warning at the row, request #2's time unknown`, async () => {
        const changed = data.replace(/"time":\{"created":\d+,/, `"time":{"created":${bad},`).replace(/'/g, "''");
        mkdirSync(join(dir, `oc-time-${n}`));
        const db = await editedDb(join(dir, `oc-time-${n}`), [`UPDATE message SET data = '${changed}' WHERE id = '${row.slice('message:'.length)}'`]);
        const got = (await analyze(db))[0];
        checkTime(base, got, 1, null, [{ file: db, line: 0, severity: 'warning', message: `row ${row}: values taken as unknown: time.created ${shown} ${MS_RULE}` }]);
      });
    }
  });

  describe('opencode JSON storage (< 1.2): time.created of the second request’s message file, which orders the messages', () => {
    let base: Sess;
    let legacy: string;
    let message: string;
    let original: string;
    before(async () => {
      legacy = join(dir, 'oc-legacy');
      await writeLegacyStorage(legacy);
      base = (await analyze(legacy))[0];
      message = base.requests[1].file;
      original = readFileSync(message, 'utf8');
      assert.match(original, /"created": \d+/);
    });
    for (const [bad, shown] of BAD_MS) {
      it(`${bad}: same requests in file-name (id) order, said so, one warning at the file, request #2's time unknown`, async () => {
        writeFileSync(message, original.replace(/"created": \d+/, `"created": ${bad}`));
        const got = (await analyze(legacy))[0];
        checkTime(base, got, 1, null, [
          { file: message, line: 1, severity: 'warning', message: `values taken as unknown: time.created ${shown} ${MS_RULE}` },
          { file: message, line: 1, severity: 'warning', message: 'time.created unknown: the messages of this session are taken in file-name (id) order, not time order' },
        ]);
      });
    }
  });

  describe('capture meta: usage.cache_read_input_tokens of a Pi capture body’s meta', () => {
    const REQUESTS = 'test/fixtures/pi-capture/long/requests';
    let base: Sess;
    let original: string;
    let folder: string;
    let meta: string;
    before(async () => {
      folder = join(dir, 'capture');
      cpSync(REQUESTS, folder, { recursive: true });
      meta = join(folder, '003-anthropic-messages.meta.json');
      original = readFileSync(meta, 'utf8');
      base = (await analyze(folder))[0];
    });
    const request = () => base.requests.findIndex((r) => r.file.endsWith('003-anthropic-messages.body.json'));
    for (const [bad, shown] of BAD_COUNTS) {
      it(`${bad}: ${bad === 'null' ? 'the provider’s own null, read as none (0), no warning' : 'same requests, cacheRead unknown with one warning at the meta, totals less its tokens'}`, async () => {
        const m = /"cache_read_input_tokens":\s*(\d+)/.exec(original);
        assert.ok(m && Number(m[1]) > 0);
        writeFileSync(meta, original.replace(m[0], m[0].replace(m[1], bad)));
        const got = (await analyze(folder))[0];
        const i = request();
        assert.ok(i >= 0);
        if (bad === 'null') {
          // Anthropic's cache fields are nullable in its API: null there is "none", as the provider meant it.
          assert.equal(got.requests[i].usage!.cacheRead, 0);
          assert.deepEqual(got.diagnostics, base.diagnostics);
          assert.equal(got.totals.cacheRead, base.totals.cacheRead - base.requests[i].usage!.cacheRead!);
          return;
        }
        // The break of a later request re-bills a little more: its estimate is calibrated on one fewer prompt.
        checkCount(base, got, i, ['cacheRead'], { file: meta, line: 1, severity: 'warning', message: `meta values ignored (unknown): usage.cache_read_input_tokens ${shown} ${COUNT_RULE}` }, { costUSD: 0.009222600000000001, lostTokens: 1618 });
      });
    }
  });
});
