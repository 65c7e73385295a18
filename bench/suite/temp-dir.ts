import { mkdtempSync, readdirSync, rmSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir; every adapter gets its own, removed after. */
export function makeTempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `mnemo-bench-${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function withTempDir<T>(label: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = makeTempDir(label);
  try {
    return await work(dir);
  } finally {
    removeDir(dir);
  }
}

export interface DiskUsage {
  /** Blocks actually allocated (what `du` reports). */
  allocatedBytes: number;
  /** Sum of file sizes (`ls -l`). */
  apparentBytes: number;
  files: number;
}

export function diskUsage(dir: string): DiskUsage {
  let allocatedBytes = 0;
  let apparentBytes = 0;
  let files = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = lstatSync(p);
      if (s.isDirectory()) walk(p);
      else {
        files++;
        allocatedBytes += s.blocks * 512;
        apparentBytes += s.size;
      }
    }
  };
  walk(dir);
  return { allocatedBytes, apparentBytes, files };
}
