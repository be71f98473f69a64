// Preloaded (`node --require`) into every process the benchmark runs: at exit, writes the
// process's CPU time (user + system, all threads, ms) and peak RSS (KiB) to $PREFIX_LENS_BENCH_PROBE.
const out = process.env.PREFIX_LENS_BENCH_PROBE;
if (out && require('node:worker_threads').isMainThread) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    require('node:fs').writeFileSync(out, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: u.maxRSS }));
  });
}
