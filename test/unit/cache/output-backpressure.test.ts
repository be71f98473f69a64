/**
 * The output entry is written with backpressure: OutputEntryWriter says when its file's buffer
 * is full, and the `--json` writer waits for its tee as it waits for stdout, so a report printed
 * faster than its entry is written does not queue in memory (the 100 MiB bench session queued
 * most of its ~88 MB of text in the entry's write stream before).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { OutputEntryWriter, outputFile } from '../../../src/cache/output.js';
import type { Identity } from '../../../src/cache/identity.js';
import { JsonReportWriter, sessionReports } from '../../../src/cli/pipeline.js';
import type { SessionRef } from '../../../src/hosts/registry.js';
import type { SessionReport } from '../../../src/report/json.js';

describe('output entry backpressure', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-outbp-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('OutputEntryWriter returns a promise while its file buffer is full, and writes every chunk', async () => {
    const ref = { host: 'pi', key: join(dir, 's.jsonl'), path: join(dir, 's.jsonl') } as SessionRef;
    const w = new OutputEntryWriter(ref, {} as Identity, dir);
    const big = `${'x'.repeat(1024 * 1024)}\n`;
    const full = w.text(big);
    assert.ok(full instanceof Promise, 'a 1 MiB chunk fills the 16 KiB buffer');
    await full;
    assert.equal(w.text('small\n'), undefined, 'drained: a small chunk is taken at once');
    const bytes = w.bytes(new TextEncoder().encode(big));
    assert.ok(bytes instanceof Promise);
    await bytes;
    const entries = dirname(outputFile(dir, ref.key));
    const tmp = readdirSync(entries).filter((f) => f.startsWith(basename(outputFile(dir, ref.key))) && f.endsWith('.tmp'));
    assert.equal(tmp.length, 1);
    // Everything written so far is in the file (the writer never dropped a chunk while full).
    await new Promise((ok) => setTimeout(ok, 50));
    assert.equal(readFileSync(join(entries, tmp[0]), 'utf8'), `${big}small\n${big}`);
    await w.abort();
    assert.deepEqual(readdirSync(entries), []);
  });

  it('JsonReportWriter writes a chunk only after the tee took the one before', async () => {
    let pi: SessionReport | undefined;
    for await (const s of sessionReports([{ path: 'test/fixtures/pi/main' }], { env: {}, onError: (e) => assert.fail(e) })) pi ??= s;
    assert.ok(pi && pi.requests.length === 13);
    const events: string[] = [];
    let teeOpen = 0;
    const w = new JsonReportWriter((chunk) => {
      // The tee of this chunk was awaited before it is written.
      assert.equal(teeOpen, 0, 'write while the tee is still busy');
      events.push(`write ${chunk.length}`);
    });
    const tee = (text: string) => {
      teeOpen++;
      events.push(`tee ${text.length - 1}`);
      return new Promise<void>((ok) =>
        setTimeout(() => {
          teeOpen--;
          ok();
        }, 5),
      );
    };
    await w.session(pi, tee);
    await w.end();
    // The document's start line, then each session chunk: its tee (text + newline), then its write.
    assert.equal(events[0], `write ${'{\n  "version": 1,\n  "sessions": ['.length}`);
    const rest = events.slice(1, -2);
    assert.ok(rest.length >= 2 && rest.length % 2 === 0, `${rest.length} events`);
    for (let i = 0; i < rest.length; i += 2) {
      assert.match(rest[i], /^tee \d+$/);
      assert.equal(rest[i + 1], `write ${rest[i].slice(4)}`);
    }
  });
});
