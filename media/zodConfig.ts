/**
 * No code generation in the webview: zod would otherwise probe `new Function` for its object-schema
 * JIT (when a schema is built), which the CSP blocks and reports as a violation. Imported before
 * any schema module (src/protocol.ts) so the setting holds when the schemas are built. The
 * messages are small; the interpreted parser is enough.
 */
import * as z from 'zod';

z.config({ jitless: true });
