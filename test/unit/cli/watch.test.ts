import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { sessionReport, type RequestReport, type SessionReport } from '../../../src/report/json.js';

const LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

describe('analyze --watch', () => {
  it('prints the report, then each appended request as it lands (NDJSON), equal to a full analysis', async function () {
    this.timeout(60_000);
    const { execa } = await import('execa'); // ESM-only package
    const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-watch-'));
    try {
      const file = join(dir, 'growing.jsonl');
      const lines = readFileSync(join(LONG, readdirSync(LONG)[0]), 'utf8').trimEnd().split('\n');
      writeFileSync(file, `${lines.slice(0, 10).join('\n')}\n`);
      const child = execa('node', ['dist/cli.js', 'analyze', '--watch', '--json', file], { reject: false, buffer: false });
      const events: Array<{ event: string; report?: SessionReport; request?: RequestReport }> = [];
      let text = '';
      const waitFor = (n: number) =>
        new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`timed out waiting for ${n} events; got ${JSON.stringify(events.map((e) => e.event))}`)), 30_000);
          const check = () => {
            if (events.length >= n) {
              clearTimeout(t);
              resolve();
            } else setTimeout(check, 20);
          };
          check();
        });
      child.stdout!.on('data', (d: Buffer) => {
        text += d.toString();
        const parts = text.split('\n');
        text = parts.pop()!;
        for (const p of parts) if (p) events.push(JSON.parse(p));
      });
      await waitFor(1);
      assert.equal(events[0].event, 'session');
      assert.equal(events[0].report!.requests.length, 3);
      appendFileSync(file, `${lines.slice(10, 14).join('\n')}\n`);
      await waitFor(4);
      child.kill('SIGINT');
      const done = await child;
      assert.equal(done.exitCode, 0);
      const requests = events.filter((e) => e.event === 'request').map((e) => e.request!);
      const full = sessionReport(analyzeSession(await readPiSession(file)));
      assert.equal(full.requests.length, 6);
      assert.deepEqual(requests.map((r) => r.index), [4, 5, 6]);
      assert.deepEqual(requests, full.requests.slice(3));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
