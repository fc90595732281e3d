import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The corpus tier reads real recorded upstream responses from CORPUS_DIR (CI points it at the
 * shared corpus). Files are read in place and never copied into the project.
 * Returns the folder, or a reason to skip that a test passes to `t.skip()` / `{ skip }`.
 */
export function corpusDir(sub = ''): { dir: string; skip: false } | { dir: ''; skip: string } {
  const root = process.env.CORPUS_DIR;
  if (!root) return { dir: '', skip: 'CORPUS_DIR is not set: the corpus tier needs the recorded upstream corpus' };
  const dir = path.resolve(root, sub);
  if (!existsSync(dir)) return { dir: '', skip: `CORPUS_DIR has no ${sub || 'folder'} (${dir})` };
  return { dir, skip: false };
}
