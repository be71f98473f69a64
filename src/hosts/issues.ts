/**
 * Zod errors as diagnostic text, shared by the host readers.
 */
import type { z } from 'zod';

/** One-line summary of a zod error for a diagnostic: `path: message; …` (first 3 issues). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}
