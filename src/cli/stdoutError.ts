/**
 * What the CLI does when stdout refuses its output. A closed pipe (`prefix-lens analyze | head`,
 * EPIPE) ends the output, not the program: exit with the code set so far. Anything else (ENOSPC on
 * a full disk or /dev/full, EIO, EBADF of a closed fd 1) is a failure the user has to see: one line
 * on stderr, exit 2 (never 1, which `check` gives a break that failed the gate), no stack trace.
 * Kept apart from main.ts so the warm entry (entry.ts) can use it without loading the analysis.
 * @returns never: the process exits
 */
export function stdoutFailed(e: unknown): never {
  const x = e as NodeJS.ErrnoException;
  if (x?.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  const what = x?.code ? `${x.code}: ${String(x.message).replace(/^[A-Z]+: /, '')}` : String(e);
  try {
    process.stderr.write(`prefix-lens: cannot write the output (${what.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')})\n`);
  } catch {
    // stderr is gone too: the exit code is all that is left.
  }
  process.exit(2);
}
