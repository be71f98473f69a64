/** Types of scripts/vsix/vsix.mjs (see the docstrings there). */
export function packageVsix(repo: string, outFile: string): { log: string; dist: string[] };
export function readVsix(file: string): Promise<Map<string, { size: number; compressedSize: number; data: Buffer }>>;
