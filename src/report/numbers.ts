/**
 * From a report's send-order `index` (what `matched`, `systemDeltas.comparedWith`, persona events'
 * and phux messages' `request` and `hostMiss.disagreeing` hold) to the request's `number`, the
 * name every surface shows (core/numbering.ts). Shared by the CLI's text and the webview.
 */
import type { RequestReport } from './json.js';

/** The `number` of the request at send-order `index` among `requests` (sorted by index); `String(index)` when none has it. */
export function numberAt(requests: ReadonlyArray<Pick<RequestReport, 'index' | 'number'>>, index: number): string {
  const at = requests[index - 1];
  if (at && at.index === index) return at.number ?? String(index);
  return requests.find((r) => r.index === index)?.number ?? String(index);
}
