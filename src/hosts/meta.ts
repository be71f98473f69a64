/**
 * Sidecar JSON files of a capture folder (`NNN-….meta.json`, one object each), shared by the
 * wire readers: absent is normal (undefined, no diagnostic); anything else that cannot be used — not
 * a regular file, over the size limit, not JSON, not an object — is undefined with a warning at
 * the file, line 1. Depth-bounded like every untrusted JSON (core/depth.ts).
 */
import { depthMessage, parseBounded } from '../core/depth.js';
import type { Diagnostic } from '../core/model.js';
import { FILE_LIMITS, fileErrorText, readRegularText } from './files.js';

/**
 * Reads one meta file.
 * @returns the object, or undefined (absent, or unusable with a warning in `diagnostics`)
 */
export async function readMetaObject(file: string, diagnostics: Diagnostic[]): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readRegularText(file, FILE_LIMITS.small);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      diagnostics.push({ file, line: 1, severity: 'warning', message: `meta file ignored: ${fileErrorText(e)}` });
    }
    return undefined;
  }
  try {
    const { value, cut } = parseBounded(text);
    if (cut) diagnostics.push({ file, line: 1, severity: 'warning', message: depthMessage(cut) });
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    diagnostics.push({ file, line: 1, severity: 'warning', message: 'meta file is JSON but not an object; ignored' });
    return undefined;
  } catch (e) {
    diagnostics.push({ file, line: 1, severity: 'warning', message: `meta file is not JSON; ignored: ${fileErrorText(e)}` });
    return undefined;
  }
}
