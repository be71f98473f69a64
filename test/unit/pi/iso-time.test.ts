/**
 * Pi's timestamps are read without Date.parse when they have Pi's own form (normalize.ts
 * fixedIsoMs): the value must be Date.parse's on every timestamp of every fixture, and on the
 * edge cases the fast path hands back to Date.parse.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fixedIsoMs, isoMs } from '../../../src/hosts/pi/normalize.js';

/** Every string value that looks like an ISO timestamp in the fixtures' text files. */
function fixtureTimestamps(): string[] {
  const out = new Set<string>();
  const walk = (dir: string) => {
    for (const n of readdirSync(dir)) {
      const p = join(dir, n);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (/\.(jsonl|json|ndjson)$/.test(n) && st.size < 64 * 1024 * 1024) {
        for (const m of readFileSync(p, 'utf8').matchAll(/"(\d{4}-\d\d-\d\dT[^"]{0,40})"/g)) out.add(m[1]);
      }
    }
  };
  walk('test/fixtures');
  return [...out];
}

const parsed = (s: string): number | null => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t;
};

describe('pi ISO timestamps without Date.parse', () => {
  it("gives Date.parse's value for every fixture timestamp", () => {
    const all = fixtureTimestamps();
    const fast = all.filter((s) => fixedIsoMs(s) !== undefined);
    // The recordings' Pi entries are written by Date.toISOString: most take the fast path.
    assert.ok(all.length > 200, `${all.length} timestamps`);
    assert.ok(fast.length > 200, `${fast.length} in Pi's form`);
    for (const s of all) {
      assert.equal(isoMs(s), parsed(s), s);
      const f = fixedIsoMs(s);
      if (f !== undefined) assert.equal(f, Date.parse(s), s);
    }
  });

  it('hands the edge cases to Date.parse, with its value', () => {
    const cases = [
      '2026-11-01T13:00:01.364Z', // fast
      '1970-01-01T00:00:00.000Z',
      '2026-02-28T23:59:59.999Z',
      '2026-02-29T00:00:00.000Z', // day 29–31: Date.parse's own overflow rules
      '2026-02-31T00:00:00.000Z',
      '2026-01-31T12:00:00.000Z',
      '2026-01-01T24:00:00.000Z', // hour 24
      '2026-01-01T23:59:60.000Z', // second 60
      '2026-13-01T00:00:00.000Z',
      '2026-00-01T00:00:00.000Z',
      '2026-01-00T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '0099-01-01T00:00:00.000Z', // Date.UTC would read year 99 as 1999
      '2026-01-01T00:00:00.000+01:00',
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.000z',
      '2026-01-01 00:00:00.000Z',
      '2026-01-0aT00:00:00.000Z',
      '+02026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.-00Z',
      'not a time at all, 24 c.',
    ];
    for (const s of cases) {
      assert.equal(isoMs(s), parsed(s), s);
      const f = fixedIsoMs(s);
      if (f !== undefined) assert.equal(f, Date.parse(s), s);
    }
    assert.equal(fixedIsoMs('2026-11-01T13:00:01.364Z'), Date.UTC(2026, 10, 1, 13, 0, 1, 364));
    for (const s of ['2026-02-29T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '0099-01-01T00:00:00.000Z', '2026-01-01T00:00:00.-00Z']) assert.equal(fixedIsoMs(s), undefined, s);
    assert.equal(isoMs(undefined), null);
    assert.equal(isoMs(''), null);
  });

  it('agrees with Date.parse on every millisecond form of a few years of random instants', () => {
    let x = 7;
    const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
    for (let i = 0; i < 20000; i++) {
      const t = 1_700_000_000_000 + (next() % 200_000_000) * 1000 + (next() % 1000);
      const s = new Date(t).toISOString();
      assert.equal(isoMs(s), t, s);
    }
  });
});
