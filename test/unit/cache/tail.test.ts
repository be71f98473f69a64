/**
 * The persisted incremental tail (src/cache/tail.ts): a Pi session analyzed once (saving its
 * state), then grown by appended lines and continued by a new "process" (a state parsed from its
 * serialized text, nothing shared in memory), gives `--json` bytes identical to a full analysis
 * of the grown file. Cut at many line boundaries of every Pi recording and of generated sessions;
 * a rewritten, truncated, half-written, corrupt or foreign case falls back (null).
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { identityWithRules, rulesHash, type Identity } from '../../../src/cache/identity.js';
import * as tail from '../../../src/cache/tail.js';
import { analyzePiWithState, continuePi, continueReport, lastMiss, parseTail, serializeTail, TAIL_FORMAT, type TailBody, type TailState } from '../../../src/cache/tail.js';
import { defaultRules } from '../../../src/core/rules.js';
import { piRef } from '../../../src/hosts/pi/discover.js';
import { openRef, type SessionRef } from '../../../src/hosts/registry.js';
import { renderSession, sessionJsonLines } from '../../../src/cli/pipeline.js';
import { sessionReport, type SessionReport } from '../../../src/report/json.js';
import { attachPhux } from '../../../src/report/phux.js';
import { jsonText } from '../../../src/sanitize.js';
import { writeSession } from '../../../scripts/bench/corpus.js';

/** The Pi recordings (transcripts; the capture folders' bodies are not joined here). */
const RECORDINGS = ['test/fixtures/pi/main', 'test/fixtures/pi/long', 'test/fixtures/pi-capture/main', 'test/fixtures/pi-capture/long'].map((d) => {
  const base = join(d, 'agent', 'sessions');
  const sub = join(base, readdirSync(base)[0]);
  return join(sub, readdirSync(sub).find((f) => f.endsWith('.jsonl'))!);
});

/** No capture folder can match (the identity's capture stamp is null). */
const ENV = { ...process.env, PREFIX_LENS_CAPTURE_DIRS: '' };

async function refOf(file: string): Promise<SessionRef> {
  const ref = await piRef(file, 'named');
  assert.ok(ref, file);
  return ref;
}

async function idOf(ref: SessionRef): Promise<Identity> {
  const id = await identityWithRules(ref, rulesHash(defaultRules), ENV);
  assert.ok(id);
  return id;
}

const bytesOf = (chunks: Uint8Array[]) => Buffer.concat(chunks.map((c) => Buffer.from(c)));

/** A state's file bytes (what saveTail writes). */
const fileOf = (state: TailState) => Buffer.concat(serializeTail(state));

/** The state with node `i`'s bytes replaced by `f(bytes)` (its length in the table follows). */
function withNodeBytes(state: TailState, i: number, f: (b: Buffer) => Buffer): TailState {
  let at = 0;
  for (let k = 0; k < i; k++) at += state.nodes[k].b.n ?? 0;
  const n = state.nodes[i].b.n!;
  const blob = Buffer.from(state.blob.buffer, state.blob.byteOffset, state.blob.byteLength);
  const mid = f(Buffer.from(blob.subarray(at, at + n)));
  const nodes = state.nodes.map((x, k) => (k === i ? { p: x.p, b: { ...x.b, n: mid.length } } : x));
  return { ...state, nodes, blob: Buffer.concat([blob.subarray(0, at), mid, blob.subarray(at + n)]) };
}

/** The `--json` block of a full analysis (openRef, analyzeSession with `limit`, the report), as the CLI renders it. */
async function fullBlock(file: string, limit?: number): Promise<Buffer> {
  const ref = await refOf(file);
  const [s] = await openRef(ref, { env: ENV });
  const report = attachPhux(sessionReport(analyzeSession(s, defaultRules, { calibrationLimit: limit })), s);
  return bytesOf((await renderSession(report, jsonText)).chunks);
}

/** What a first run saves: the block it printed and the serialized state (null when none). */
async function firstRun(file: string, limit?: number): Promise<Saved> {
  const ref = await refOf(file);
  const id = await idOf(ref);
  const r = await analyzePiWithState(ref, { calibrationLimit: limit });
  assert.ok(r, `${file}: read as a full read does`);
  const block = bytesOf((await renderSession(r.reports[0], jsonText)).chunks);
  return { block, state: r.state ? fileOf({ ...r.state, identity: id } satisfies TailState) : null, report: JSON.stringify(r.reports[0]) };
}

/** What a run leaves for the next: its `--json` block, its state (serialized) and its report entry (as the result cache stores it). */
interface Saved {
  block: Buffer;
  /** The state's file bytes (serializeTail). */
  state: Buffer | null;
  report: string;
}

/** A later run from a saved state (parsed anew: nothing shared with the run that saved it). */
async function laterRun(file: string, saved: Saved, limit?: number, objects = false): Promise<(Saved & { appended: number; tree: boolean }) | null> {
  const ref = await refOf(file);
  const state = saved.state === null ? null : parseTail(saved.state);
  if (saved.state !== null) assert.ok(state, 'the saved state parses and validates');
  if (!state) return null;
  const now = await idOf(ref);
  const tree0 = tail.treeRuns;
  // The saved block in small chunks: the requests' section and its markers found across chunk edges.
  const chunks = Array.from({ length: Math.ceil(saved.block.length / 997) }, (_, i) => saved.block.subarray(i * 997, (i + 1) * 997));
  const c = await continuePi(ref, state, chunks, now, sessionJsonLines, { calibrationLimit: limit });
  const tree = tail.treeRuns !== tree0;
  if (!c) {
    misses.set(lastMiss, (misses.get(lastMiss) ?? 0) + 1);
    return null;
  }
  const body: TailBody | null = c.state;
  let report = '';
  if (objects) {
    // The result cache's path: the saved report entry continued as objects, from the state parsed anew.
    const o = await continueReport(ref, parseTail(saved.state!)!, JSON.parse(saved.report) as SessionReport, now, { calibrationLimit: limit });
    assert.ok(o, `objects path continued as the bytes path did (${lastMiss})`);
    assert.ok(bytesOf((await renderSession(o.report, jsonText)).chunks).equals(bytesOf(c.chunks)), 'objects path = bytes path');
    report = JSON.stringify(o.report);
  }
  return { block: bytesOf(c.chunks), state: body ? fileOf({ ...body, identity: now }) : null, appended: c.appended, report, tree };
}

/** Why later runs fell back, with counts (printed when a test asks for a share of continued runs). */
const misses = new Map<string, number>();

describe('persisted tail (Pi): a new process continues a grown session from its saved state', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-tail-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Writes the file up to `cuts[0]`, runs a first analysis, then appends up to each next cut and
   * continues from the previous run's saved output and state; every run's block must equal a full
   * analysis of the file at that moment. @returns how many runs continued (the others fell back)
   */
  /** Appended lines holding these were continued (`continued`) in how many of the runs that had them (`runs`). */
  const EVENTS = { compaction: '"type":"compaction"', branchSummary: '"type":"branch_summary"', modelChange: '"type":"model_change"' };
  type EventCounts = Record<keyof typeof EVENTS, [continued: number, runs: number]>;

  async function grow(name: string, text: Buffer, cuts: number[], limit?: number, objects = false): Promise<{ continued: number; runs: number; withState: number; tree: number; events: EventCounts; misses: Record<string, number> }> {
    const file = join(dir, name);
    writeFileSync(file, text.subarray(0, cuts[0]));
    misses.clear();
    let saved = await firstRun(file, limit);
    assert.ok(saved.block.equals(await fullBlock(file, limit)), `${name}: first run at ${cuts[0]}`);
    let continued = 0;
    let withState = 0;
    let tree = 0;
    const events = Object.fromEntries(Object.keys(EVENTS).map((k) => [k, [0, 0]])) as EventCounts;
    for (let i = 1; i < cuts.length; i++) {
      const added = text.subarray(cuts[i - 1], cuts[i]);
      appendFileSync(file, added);
      if (saved.state !== null) withState++;
      const full = await fullBlock(file, limit);
      const later = await laterRun(file, saved, limit, objects);
      for (const [k, needle] of Object.entries(EVENTS) as Array<[keyof typeof EVENTS, string]>) {
        if (saved.state === null || !added.includes(needle)) continue;
        events[k][1]++;
        if (later) events[k][0]++;
      }
      if (later) {
        continued++;
        if (later.tree) tree++;
        assert.equal(later.block.toString('utf8'), full.toString('utf8'), `${name}: continued at byte ${cuts[i]} (from ${cuts[i - 1]})`);
        saved = { block: later.block, state: later.state, report: later.report };
      } else saved = await firstRun(file, limit);
    }
    return { continued, runs: cuts.length - 1, withState, tree, events, misses: Object.fromEntries(misses) };
  }

  const lineEnds = (text: Buffer) => {
    const out: number[] = [];
    for (let i = text.indexOf(10); i >= 0; i = text.indexOf(10, i + 1)) out.push(i + 1);
    return out;
  };

  it('every Pi recording, cut at every line and continued line by line, gives the full analysis (small token-model limit: continued)', async function () {
    this.timeout(300_000);
    let total = 0;
    let runs = 0;
    const stated: number[] = [];
    const perFile: unknown[] = [];
    for (const f of RECORDINGS) {
      const text = readFileSync(f);
      const ends = lineEnds(text);
      const r = await grow(`rec-${runs}.jsonl`, text, [ends[1], ...ends.slice(2)], 4, true);
      total += r.continued;
      runs += r.withState;
      stated.push(r.withState);
      perFile.push({ tree: r.tree, events: r.events, misses: r.misses });
    }
    // Every cut has a state (main has phux context messages from line 11: their stream continues
    // too; its compaction on line 29, continued, saves a state from the entry tree read again).
    assert.deepEqual(stated, [43, 18, 43, 18]);
    // Every append holding a compaction, a branch summary or a model change continued; those and
    // the branches (main) read the entry tree again (tree). The others fell back for the two
    // reasons that need every earlier request judged again (docs/cache.md "Persisted tail").
    const events = { compaction: [1, 1], branchSummary: [1, 1], modelChange: [2, 2] };
    const none = { compaction: [0, 0], branchSummary: [0, 0], modelChange: [2, 2] };
    const mainMisses = { 'the token model moved': 5, 'earlier requests rebuilt (a new rate)': 3 };
    const longMisses = { 'the token model moved': 4, 'earlier requests rebuilt (a new rate)': 1 };
    assert.deepEqual(perFile, [
      { tree: 5, events, misses: mainMisses },
      { tree: 2, events: none, misses: longMisses },
      { tree: 5, events, misses: mainMisses },
      { tree: 2, events: none, misses: longMisses },
    ]);
    assert.deepEqual([total, runs], [96, 122]);
  });

  it('the same with the default token-model limit (every fit still moves here: full reads), and appended in several lines at once', async function () {
    this.timeout(300_000);
    for (const f of RECORDINGS) {
      const text = readFileSync(f);
      const ends = lineEnds(text);
      const cuts = [ends[Math.floor(ends.length / 3)], ends[Math.floor(ends.length / 2)], ends[ends.length - 3], text.length];
      await grow(`default-${f.length}.jsonl`, text, cuts);
    }
  });

  it('a generated session (compactions, branches, errors, model switches), cut at many lines, continued in bursts', async function () {
    this.timeout(300_000);
    const src = join(dir, 'generated-source.jsonl');
    const w = await writeSession(src, { bytes: 600_000, seed: 12, id: '019a0000-0000-7000-8000-00000000cafe', cwd: '/home/dev/p', startMs: Date.UTC(2026, 10, 1) });
    assert.equal(w.requests, 296);
    const text = readFileSync(src);
    // The shapes the continuation must handle or refuse (then a full read, same bytes).
    assert.deepEqual(['"type":"compaction"', '"type":"branch_summary"', '"stopReason":"error"', '"type":"model_change"'].map((k) => text.toString().split(k).length - 1), [1, 2, 3, 4]);
    const ends = lineEnds(text);
    const cuts = [ends[40]];
    for (let i = 41; i < ends.length; i += 1 + (i % 5)) cuts.push(ends[i]);
    cuts.push(text.length);
    const r = await grow('generated.jsonl', text, cuts, 6);
    assert.deepEqual([r.continued, r.runs, r.tree], [233, 239, 2]);
    // Each cut whose appended lines hold one of these continued.
    assert.deepEqual(r.events, { compaction: [1, 1], branchSummary: [2, 2], modelChange: [3, 3] });
    // A new rate reprices earlier requests, a new point of a young lineage moves the estimates of
    // its earlier requests: both need them judged again (docs/cache.md "Persisted tail").
    assert.deepEqual(r.misses, { 'earlier requests rebuilt (a new rate)': 2, 'the token model moved': 4 });
  });

  it('a state is refused: rewritten in place (same size), truncated, half-written last line, corrupt, another build or format version', async () => {
    const text = readFileSync(RECORDINGS[1]);
    const ends = lineEnds(text);
    const file = join(dir, 'refused.jsonl');
    const at = ends[ends.length - 6];
    const reset = async () => {
      writeFileSync(file, text.subarray(0, at));
      return firstRun(file, 4);
    };
    // Appended normally: continues (the control).
    let saved = await reset();
    appendFileSync(file, text.subarray(at, ends[ends.length - 5]));
    assert.ok(await laterRun(file, saved, 4), 'a plain append continues');
    // Rewritten in place with the same size, then grown: a byte in the first 64 KiB and one just before the seam.
    for (const pos of [100, at - 10]) {
      saved = await reset();
      const b = Buffer.from(text.subarray(0, ends[ends.length - 5]));
      b[pos] = b[pos] === 0x61 ? 0x62 : 0x61;
      writeFileSync(file, b);
      assert.equal(await laterRun(file, saved, 4), null, `rewritten at ${pos}`);
      assert.equal(lastMiss, 'not grown from the saved bytes (rewritten, truncated, replaced)', `rewritten at ${pos}`);
    }
    // Truncated below the saved offset.
    saved = await reset();
    writeFileSync(file, text.subarray(0, ends[ends.length - 8]));
    assert.equal(await laterRun(file, saved, 4), null, 'truncated');
    assert.equal(lastMiss, 'shorter than the saved offset', 'truncated');
    // A half-written last line (Pi is still writing it): not continued now; then whole, it is.
    saved = await reset();
    appendFileSync(file, text.subarray(at, ends[ends.length - 5] - 7));
    assert.equal(await laterRun(file, saved, 4), null, 'half-written');
    assert.equal(lastMiss, 'the reader could not continue (rewritten, or a last line without its newline)', 'half-written');
    appendFileSync(file, text.subarray(ends[ends.length - 5] - 7, ends[ends.length - 5]));
    const later = await laterRun(file, saved, 4);
    assert.ok(later, 'continued once the line is whole');
    assert.ok(later.block.equals(await fullBlock(file, 4)));
    // An appended entry reusing an earlier entry's id (Pi: the later one wins, with a warning): a
    // full read links the earlier entry's children to the later one (roots then), which changes
    // earlier requests; the state holds only the ids' hashes: found by the entry tree read again.
    saved = await reset();
    const dup = JSON.parse(text.subarray(ends[3], ends[4]).toString()) as Record<string, unknown>;
    const last = JSON.parse(text.subarray(ends[ends.length - 7], at).toString()) as { id: string };
    appendFileSync(file, `${JSON.stringify({ ...dup, parentId: last.id })}\n`);
    assert.equal(await laterRun(file, saved, 4), null, 'a duplicate of an earlier id');
    assert.equal(lastMiss, 'an appended entry reuses an earlier id (a full read links earlier entries to it)');
    // Corrupt and foreign states do not parse.
    saved = await reset();
    assert.ok(saved.state);
    assert.equal(parseTail(saved.state.subarray(0, -10)), null, 'cut short');
    assert.equal(parseTail(saved.state.subarray(1)), null, 'a byte of the blob missing');
    assert.equal(parseTail(Buffer.from('{"format":"x"}')), null, 'foreign');
    assert.equal(parseTail(Buffer.from(saved.state.toString('latin1').replace(`"version":${tail.TAIL_VERSION}`, '"version":99'), 'latin1')), null, 'another format version');
    const obj = parseTail(saved.state)!;
    assert.equal(obj.format, TAIL_FORMAT);
    assert.equal(parseTail(Buffer.from(JSON.stringify({ ...obj, blob: undefined }))), null, 'the earlier layout (all JSON)');
    // A chain block changed: its hash no longer matches the saved check.
    const msg = obj.nodes.findIndex((n) => n.b.segment === 'messages' && (n.b.n ?? 0) > 0);
    const changed = withNodeBytes(obj, msg, (b) => Buffer.concat([b, Buffer.from(' ')]));
    assert.ok(parseTail(fileOf(changed)), 'parses (the lengths add up)');
    appendFileSync(file, text.subarray(at, ends[ends.length - 5]));
    assert.equal(await laterRun(file, { ...saved, state: fileOf(changed) }, 4), null, 'chain does not hash as saved');
    assert.equal(lastMiss, 'a saved chain does not hash as saved', 'chain does not hash as saved');
    // A block only the encoder's state points at (the last entry's message, after every request's chain): checked too.
    const encNode = obj.pi.encoder[0].node;
    assert.ok((obj.nodes[encNode].b.n ?? 0) > 0 && !obj.judge.lineages.some((l) => l.recent.some((e) => e.tail === encNode)), 'a node of the encoder alone');
    const encoderOnly = withNodeBytes(obj, encNode, (b) => Buffer.concat([b, Buffer.from(' ')]));
    assert.equal(await laterRun(file, { ...saved, state: fileOf(encoderOnly) }, 4), null, 'encoder chain does not hash as saved');
    assert.equal(lastMiss, 'a saved chain does not hash as saved', 'encoder chain does not hash as saved');
    // The same length, one byte changed.
    const flipped = withNodeBytes(obj, msg, (b) => {
      b[b.length - 1] ^= 0x01;
      return b;
    });
    assert.equal(await laterRun(file, { ...saved, state: fileOf(flipped) }, 4), null, 'a byte changed');
    assert.equal(lastMiss, 'a saved chain does not hash as saved', 'a byte changed');
    // Another build (the analysis code's identity differs).
    const other = { ...obj, identity: { ...obj.identity, code: 'another-build' } };
    assert.equal(await laterRun(file, { ...saved, state: fileOf(other) }, 4), null, 'another build');
    assert.equal(lastMiss, 'another build, rules, ref or captured bodies', 'another build');
    // The control again, from the untouched state.
    assert.ok(await laterRun(file, saved, 4));
  });
});
