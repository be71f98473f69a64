/**
 * Every option a command accepts is in its line of `prefix-lens --help`, in its own `--help` and in
 * the README's command block, and every option those lines name is accepted (`--captures DIR` was
 * missing from analyze and check in the README, `--quiet` from capture in the usage). An option of
 * the other command is a usage error (exit 2): `check --json` was accepted and ignored.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REPORT_OPTIONS, USAGE } from '../../../src/cli/main.js';
import { DIFF_OPTIONS, DIFF_USAGE } from '../../../src/cli/diff.js';
import { FLEET_OPTIONS, FLEET_USAGE } from '../../../src/cli/fleet.js';
import { CAPTURE_OPTIONS, captureUsage } from '../../../src/cli/capture.js';
import { runCli } from '../../runCli.js';

type Command = 'analyze' | 'check' | 'diff' | 'fleet' | 'capture';

/** The options each command accepts, `--help` left out (it is on every command). */
function accepted(command: Command): string[] {
  const opts: Record<string, unknown> =
    command === 'diff' ? DIFF_OPTIONS : command === 'fleet' ? FLEET_OPTIONS : command === 'capture' ? CAPTURE_OPTIONS : Object.fromEntries(Object.entries(REPORT_OPTIONS).filter(([, o]) => (o.commands as readonly string[]).includes(command)));
  return Object.keys(opts).filter((o) => o !== 'help').sort();
}

/** The `--options` named in a usage text. */
function named(text: string): string[] {
  return [...new Set([...text.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]))].filter((o) => o !== 'help').sort();
}

/** The line of `command` in a block of `prefix-lens <command> …` / `node dist/cli.js <command> …` lines (capture's usage spans two). */
function lineOf(text: string, command: Command): string {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => new RegExp(`^\\s*(usage: )?(prefix-lens|node dist/cli\\.js) ${command}\\b`).test(l));
  assert.ok(i >= 0, `no ${command} line in:\n${text}`);
  // A continuation line is indented under the command's options.
  let out = lines[i];
  for (let j = i + 1; j < lines.length && /^\s{10,}\[/.test(lines[j]); j++) out += lines[j];
  return out;
}

/** The README's command block: the first ```sh block of "## Command line". */
function readmeBlock(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('\n## Command line'));
  return section.slice(section.indexOf('```sh'), section.indexOf('```', section.indexOf('```sh') + 5));
}

const COMMANDS: Command[] = ['analyze', 'check', 'diff', 'fleet', 'capture'];

describe('usage lines and the options each command accepts', () => {
  for (const command of COMMANDS) {
    it(`${command}: prefix-lens --help, its own --help and the README name exactly the options it accepts`, () => {
      const want = accepted(command);
      assert.deepEqual(named(lineOf(USAGE, command)), want, 'prefix-lens --help');
      assert.deepEqual(named(lineOf(readmeBlock(), command)), want, 'README');
      const own = command === 'diff' ? DIFF_USAGE : command === 'fleet' ? FLEET_USAGE : command === 'capture' ? captureUsage() : null;
      if (own) assert.deepEqual(named(lineOf(own, command)), want, `${command} --help`);
    });
  }

  it('the accepted options, as they stand', () => {
    assert.deepEqual(
      COMMANDS.map((c) => [c, accepted(c)]),
      [
        ['analyze', ['all', 'captures', 'examples', 'html', 'json', 'no-cache', 'requests', 'watch']],
        ['check', ['all', 'captures', 'examples', 'ignore', 'min-tokens', 'min-usd', 'no-cache', 'requests']],
        ['diff', ['captures', 'context', 'examples', 'requests', 'session']],
        ['fleet', ['json', 'phux-bin', 'socket', 'timeout-ms']],
        ['capture', ['max-mb', 'out', 'port', 'quiet', 'upstream']],
      ],
    );
  });

  it('an option of the other command is a usage error naming the command that takes it (exit 2)', async () => {
    const cases: Array<[string[], string]> = [
      [['check', '--json'], 'prefix-lens: --json is an option of analyze, not check'],
      [['check', '--html', 'x.html'], 'prefix-lens: --html is an option of analyze, not check'],
      [['check', '--watch'], 'prefix-lens: --watch is an option of analyze, not check'],
      [['analyze', '--min-tokens', '5'], 'prefix-lens: --min-tokens is an option of check, not analyze'],
      [['analyze', '--ignore', 'model-switch'], 'prefix-lens: --ignore is an option of check, not analyze'],
    ];
    for (const [args, line] of cases) {
      const r = await runCli(args);
      assert.deepEqual([r.code, r.out, r.err.split('\n')[0]], [2, '', line], args.join(' '));
    }
  });

  it('-h prints the usage for analyze and check too (exit 0)', async () => {
    for (const c of ['analyze', 'check']) {
      const r = await runCli([c, '-h']);
      assert.deepEqual([r.code, r.out, r.err], [0, USAGE, '']);
    }
  });
});
