/**
 * Helpers for the review tests: copies recorded bodies (with their metas) into a temp capture
 * folder, each optionally edited, so a scenario is built from real recorded requests.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** [source stem in `from`, edit of the parsed body, edit of the parsed meta]. */
export type Step = [string, ((body: any) => void)?, ((meta: any) => void)?];

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Writes the steps as 001.body.json, 002.body.json, … (send order) and returns the folder. */
export function captureDir(from: string, steps: Step[]): string {
  const d = mkdtempSync(join(tmpdir(), 'prefix-lens-review-'));
  made.push(d);
  steps.forEach(([stem, editBody, editMeta], i) => {
    const body = JSON.parse(readFileSync(join(from, `${stem}.body.json`), 'utf8'));
    const meta = JSON.parse(readFileSync(join(from, `${stem}.meta.json`), 'utf8'));
    editBody?.(body);
    editMeta?.(meta);
    const name = String(i + 1).padStart(3, '0');
    writeFileSync(join(d, `${name}.body.json`), JSON.stringify(body));
    writeFileSync(join(d, `${name}.meta.json`), JSON.stringify(meta));
  });
  return d;
}

export const PI_MAIN = 'test/fixtures/pi/main/requests';
export const PI_LONG = 'test/fixtures/pi/long/requests';
