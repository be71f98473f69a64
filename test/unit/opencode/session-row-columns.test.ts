/**
 * OpenCode's `session` row columns (the running sums `cost` and `tokens_*`, `time_created`,
 * `time_updated`; all NOT NULL in session.sql.ts) are host values like any other: one that is not
 * a number of its kind is named, as written, in one warning at the database and row ("row
 * session:<id>: values taken as unknown: …"), as a message row's data is (usage-numbers-lenient),
 * instead of being dropped without a word. Nothing else of the report moves: the columns are
 * sums and times OpenCode keeps beside the messages, which the requests are read from.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../hostile/harness.js';
import { listSqliteSessions, releaseOpenCodeStores } from '../../../src/hosts/opencode/discover.js';
import { editedDb, openFixture, query } from './helpers.js';

type Diag = { file: string; line: number; severity: string; message: string };
type Sess = { id: string; diagnostics: Diag[]; [k: string]: unknown };

async function analyze(db: string): Promise<Sess[]> {
  const r = await runCli(['analyze', '--json', '--no-cache', db]);
  assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.err}`);
  return (JSON.parse(r.out) as { sessions: Sess[] }).sessions;
}

const COUNT_RULE = 'is not a token count (a non-negative integer ≤ 1000000000000)';
const USD_RULE = 'is not a cost in USD (a finite non-negative number ≤ 1000000000)';
const MS_RULE = 'is not a time (ms since epoch, at most 8.64e15 from it)';

/** Column, SQL value written, how the warning shows it, the rule. */
const CASES: Array<[string, string, string, string]> = [
  // SQLite's INTEGER affinity makes '12' the number 12: text that is no number stays text.
  ['tokens_cache_read', "'12 tokens'", '"12 tokens"', COUNT_RULE],
  ['tokens_input', '-5', '-5', COUNT_RULE],
  ['tokens_output', '1.5', '1.5', COUNT_RULE],
  ['tokens_cache_write', '1e400', 'Infinity', COUNT_RULE],
  ['cost', "'free'", '"free"', USD_RULE],
  ['cost', '-0.5', '-0.5', USD_RULE],
  ['time_updated', "'yesterday'", '"yesterday"', MS_RULE],
  ['time_updated', '1e20', '100000000000000000000', MS_RULE],
];

describe('OpenCode session row: a column that is not a number is named at its row, not dropped silently', function () {
  this.timeout(60_000);
  let dir: string;
  let base: Sess[];
  let id: string;
  let created: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-oc-row-'));
    mkdirSync(join(dir, 'base'));
    base = await analyze(await editedDb(join(dir, 'base'), []));
    const db = await openFixture();
    const first = query(db, 'SELECT id, time_created FROM session ORDER BY time_created, id')[0];
    db.close();
    id = String(first.id);
    created = Number(first.time_created);
    assert.ok(base.some((s) => s.id === id));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [n, [column, sql, shown, rule]] of CASES.entries()) {
    it(`${column} = ${sql}: one warning at the row naming it as written; the sessions otherwise as recorded`, async () => {
      mkdirSync(join(dir, `c${n}`));
      const db = await editedDb(join(dir, `c${n}`), [`UPDATE session SET ${column} = ${sql} WHERE id = '${id}'`]);
      const got = await analyze(db);
      const diag: Diag = { file: db, line: 0, severity: 'warning', message: `row session:${id}: values taken as unknown: ${column} ${shown} ${rule}` };
      assert.deepEqual(got.map((s) => s.id), base.map((s) => s.id));
      for (const [i, s] of got.entries()) {
        const b = base[i];
        const rename = (d: Diag) => ({ ...d, file: d.file.replace(join(dir, 'base'), join(dir, `c${n}`)) });
        const same = (d: Diag) => d.file === diag.file && d.line === diag.line && d.severity === diag.severity && d.message === diag.message;
        assert.equal(s.diagnostics.filter(same).length, s.id === id ? 1 : 0, s.id);
        assert.deepEqual(s.diagnostics.filter((d) => !same(d)), b.diagnostics.map(rename), s.id);
        const strip = (x: Sess) => JSON.parse(JSON.stringify({ ...x, diagnostics: [] }).split(join(dir, `c${n}`)).join('X').split(join(dir, 'base')).join('X'));
        assert.deepEqual(strip(s), strip(b), s.id);
      }
    });
  }

  it('discovery: a time_updated that is not a time is taken as absent (the ref dates from time_created), never Infinity', async () => {
    mkdirSync(join(dir, 'disc'));
    const db = await editedDb(join(dir, 'disc'), [`UPDATE session SET time_updated = 1e400 WHERE id = '${id}'`]);
    const ref = (await listSqliteSessions(db)).find((r) => r.id === id)!;
    releaseOpenCodeStores();
    assert.equal(ref.mtimeMs, created);
    assert.equal(ref.startMs, created);
  });
});
