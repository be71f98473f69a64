// Preloaded (`node --require`) into every process the benchmark runs: at exit, writes the
// process's CPU time (user + system, all threads, ms) and peak RSS (KiB) to $PREFIX_LENS_BENCH_PROBE.
// The main thread takes the variable out of its environment, so an analysis worker (whose
// process.env is a copy of the parent's, made when it starts) writes nothing. Workers are not
// told apart with node:worker_threads: loading it (and the stream classes it pulls in) cost every
// measured process ~15 M instructions, ~5 ms CPU (callgrind: `node -e 0` 85.6 M, with this probe
// 100.8 M before, 85.7 M now), a tenth of what a warm `analyze --json` run does besides starting.
const out = process.env.PREFIX_LENS_BENCH_PROBE;
if (out) {
  delete process.env.PREFIX_LENS_BENCH_PROBE;
  process.on('exit', () => {
    const u = process.resourceUsage();
    require('node:fs').writeFileSync(out, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: u.maxRSS }));
  });
}
