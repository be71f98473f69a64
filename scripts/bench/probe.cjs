// Preloaded (`node --require`) into every process the benchmark runs: at exit, writes the
// process's CPU time (user + system, all threads, ms) and peak RSS (KiB) to $PREFIX_LENS_BENCH_PROBE.
// The main thread takes the variable out of its environment, so an analysis worker (whose
// process.env is a copy of the parent's, made when it starts) writes nothing. Workers are not
// told apart with node:worker_threads: loading it (and the stream classes it pulls in) cost every
// measured process ~15 M instructions, ~5 ms CPU (callgrind: `node -e 0` 85.6 M, with this probe
// 104.9 M before, 97.3 M now; an empty preload 89.5 M).
// Peak RSS is the process's own high-water mark (Linux: VmHWM of /proc/self/status), not
// getrusage's ru_maxrss: Linux keeps ru_maxrss across execve, and libuv starts a child with fork,
// so a child's ru_maxrss is at least the RSS of the benchmark process when it was started
// (`node -e 0` started by a process of 442 MiB: ru_maxrss 404 MiB, VmHWM 40 MiB).
const out = process.env.PREFIX_LENS_BENCH_PROBE;
if (out) {
  delete process.env.PREFIX_LENS_BENCH_PROBE;
  process.on('exit', () => {
    const fs = require('node:fs');
    const u = process.resourceUsage();
    let hwm = null;
    try {
      const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
      if (m) hwm = Number(m[1]);
    } catch {
      // not Linux: getrusage's figure
    }
    fs.writeFileSync(out, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: hwm ?? u.maxRSS }));
  });
}
