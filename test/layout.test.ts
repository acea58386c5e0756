import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The most lines a source file may hold (ARCHITECTURE.md "Layout"); migrations aside, each one a schema's history. */
const MAX_FILE_LINES = 300;

const root = join(import.meta.dirname, '..');

/** Every TypeScript file under `dir`, as paths from the repository's root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

describe('layout', () => {
  it(`holds no source file over ${MAX_FILE_LINES} lines (counted as wc -l counts them), migrations aside`, () => {
    const files = sourceFiles(join(root, 'src')).filter((file) => !file.startsWith(join('src', 'store', 'migrations')));
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });
});
