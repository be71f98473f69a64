/**
 * The argument appended to an analysis worker's argv (workers.ts), so the bin (entry.ts) knows a
 * worker from the main thread without loading node:worker_threads. Only a hint: the bin then
 * checks workerData too, so the same word typed on a command line is just an unknown argument.
 */
export const WORKER_ARG = '--prefix-lens-analysis-worker';
