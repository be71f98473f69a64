/**
 * A usage error says what was wrong on its first line, then the commands' synopsis and where the
 * rest of the help is (not the whole 35-line help text, which buried the error), and exits 2.
 */
import assert from 'node:assert/strict';
import { USAGE, USAGE_HINT } from '../../../src/cli/main.js';
import { runCli } from '../../runCli.js';

describe('usage errors', () => {
  it('the hint is the synopsis of every command plus one line naming --help', () => {
    const lines = USAGE_HINT.split('\n');
    assert.equal(lines[0], 'usage:');
    assert.deepEqual(
      lines.slice(1, 6).map((l) => l.split(/\s+/)[2]),
      ['analyze', 'check', 'diff', 'fleet', 'capture'],
    );
    assert.equal(lines.at(-1), 'prefix-lens --help: what each option does, the paths it reads, the exit codes');
    assert.equal(lines.length, 8);
    assert.ok(USAGE.startsWith(lines.slice(0, -1).join('\n') + '\n\n'));
  });

  const cases: Array<[string, string[], string]> = [
    ['an unknown command', ['frob'], 'prefix-lens: unknown command "frob"'],
    ['an unknown option', ['analyze', '--bogus'], "prefix-lens: Unknown option '--bogus'"],
    // parseArgs words this one over three lines: one line here.
    ['an option value that starts with a dash', ['check', '--min-tokens', '-1'], "prefix-lens: Option '--min-tokens' argument is ambiguous. Did you forget to specify the option argument for '--min-tokens'? To specify an option argument starting with a dash use '--min-tokens=-XYZ'."],
    ['an option of another command', ['analyze', '--min-tokens', '5'], 'prefix-lens: --min-tokens is an option of check, not analyze'],
    ['options that exclude each other', ['analyze', '--requests', 'a', '--captures', 'b'], 'prefix-lens: --captures and --requests exclude each other'],
    ['--json with --html -', ['analyze', '--json', '--html', '-'], 'prefix-lens: --json and --html - both write to stdout; give --html a file'],
    ['--examples with a path', ['check', '--examples', 'x.jsonl'], 'prefix-lens: --examples reads the bundled example sessions: it takes no path (x.jsonl)'],
    ['--examples with --requests', ['analyze', '--examples', '--requests', 'd'], 'prefix-lens: --examples reads the bundled example sessions: it takes no --requests (they have their own request bodies)'],
    ['--watch with --all', ['analyze', '--all', '--watch'], 'prefix-lens: --watch needs the sessions named: a path or host:id (e.g. claude:, the newest Claude Code session), not --all'],
    ['--watch with no path', ['analyze', '--watch'], 'prefix-lens: --watch needs the sessions named: a path or host:id (e.g. claude:, the newest Claude Code session), not the bundled examples (no path: finished recordings, read with their request bodies by analyze)'],
    ['--watch with --examples', ['analyze', '--json', '--examples', '--watch'], 'prefix-lens: --watch needs the sessions named: a path or host:id (e.g. claude:, the newest Claude Code session), not the bundled examples (--examples: finished recordings, read with their request bodies by analyze)'],
    ['--requests with no path', ['check', '--requests', 'd'], 'prefix-lens: --requests needs the sessions named: the bodies belong to the sessions they were sent for (no path reads the bundled examples, which have their own)'],
    ['--all with a path', ['analyze', '--all', 'x.jsonl'], "prefix-lens: --all reads every session in the hosts' default folders: it takes no path (x.jsonl)"],
    ['--all with --requests', ['check', '--all', '--requests', 'd'], "prefix-lens: --all reads every session in the hosts' default folders: it takes no --requests (bodies belong to the sessions they were sent for)"],
    ['--all with --examples', ['analyze', '--all', '--examples'], 'prefix-lens: --examples and --all exclude each other (the bundled example sessions, or yours)'],
  ];
  for (const [what, args, first] of cases) {
    it(`${what}: the error, then the hint, on stderr; exit 2; nothing on stdout`, async () => {
      const r = await runCli(args);
      assert.equal(r.code, 2);
      assert.equal(r.out, '');
      const [line, ...rest] = r.err.trimEnd().split('\n');
      assert.ok(line.startsWith(first), line);
      assert.equal(rest.join('\n'), USAGE_HINT);
    });
  }
});
