// The floor the analysis is measured against: read every line of every .jsonl file below the
// given paths (streamed in 64 KiB chunks, as src/hosts/lines.ts) and JSON.parse it; nothing else.
// Plain JavaScript (no tsx) so the process starts as fast as `node dist/cli.js`.
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function* files(p) {
  if (statSync(p).isFile()) {
    if (p.endsWith('.jsonl')) yield p;
    return;
  }
  for (const n of readdirSync(p).sort()) yield* files(join(p, n));
}

let lines = 0;
let bytes = 0;
for (const p of process.argv.slice(2)) {
  for (const f of files(p)) {
    const decoder = new TextDecoder();
    let rest = null;
    for await (const chunk of createReadStream(f, { highWaterMark: 64 * 1024 })) {
      bytes += chunk.length;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) break;
        const piece = chunk.subarray(start, nl);
        const buf = rest ? Buffer.concat([rest, piece]) : piece;
        rest = null;
        if (buf.length) JSON.parse(decoder.decode(buf));
        lines++;
        start = nl + 1;
      }
      if (start < chunk.length) rest = rest ? Buffer.concat([rest, chunk.subarray(start)]) : Buffer.from(chunk.subarray(start));
    }
    if (rest?.length) {
      JSON.parse(decoder.decode(rest));
      lines++;
    }
  }
}
console.log(JSON.stringify({ lines, bytes }));
