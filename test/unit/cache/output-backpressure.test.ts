/**
 * The output entry never queues text in memory: OutputEntryWriter writes each chunk before it
 * returns (the 100 MiB bench session once queued most of its ~88 MB of text in the entry's write
 * stream), and the `--json` writer waits for its tee as it waits for stdout, so a tee that does
 * return a promise holds back the next chunk.
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

  it('OutputEntryWriter writes every chunk before it returns (nothing queued in memory)', async () => {
    const ref = { host: 'pi', key: join(dir, 's.jsonl'), path: join(dir, 's.jsonl') } as SessionRef;
    const w = new OutputEntryWriter(ref, {} as Identity, dir);
    const big = `${'x'.repeat(1024 * 1024)}\n`;
    const entries = dirname(outputFile(dir, ref.key));
    const tmp = () => {
      const t = readdirSync(entries).filter((f) => f.startsWith(basename(outputFile(dir, ref.key))) && f.endsWith('.tmp'));
      assert.equal(t.length, 1);
      return readFileSync(join(entries, t[0]), 'utf8');
    };
    assert.equal(w.text(big), undefined, 'no promise: written at once');
    assert.equal(tmp(), big, 'a 1 MiB chunk is in the file when text() returns');
    w.text('small\n');
    assert.equal(w.bytes(new TextEncoder().encode(`é${big}`)), undefined);
    assert.equal(tmp(), `${big}small\né${big}`);
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
