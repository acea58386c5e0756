import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The most lines a source file may hold (ARCHITECTURE.md "Layout"); migrations aside, each one a schema's history. */
const MAX_FILE_LINES = 300;

/** The most lines a function may span, its signature and closing brace included (issue 68); migrations aside. */
const MAX_FUNCTION_LINES = 80;

const root = join(import.meta.dirname, '..');

/** Every TypeScript file under `dir`, as paths from the repository's root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

/** The source files the limits hold for: every file of `src/` but the migrations. */
const limitedFiles = () => sourceFiles(join(root, 'src')).filter((file) => !file.startsWith(join('src', 'store', 'migrations')));

/** Each function of `text` (declarations, methods, arrows, accessors) with a body: where it starts, its name or its holder's, and its lines. */
function functionSpans(file: string, text = readFileSync(join(root, file), 'utf8')): { at: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const spans: { at: string; lines: number }[] = [];
  const line = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const named = node.name ?? (node.parent as { name?: ts.Node }).name;
      const start = line(node.getStart());
      spans.push({ at: `${file}:${start + 1} ${named?.getText() ?? '(anonymous)'}`, lines: line(node.end) - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

describe('layout', () => {
  it(`holds no source file over ${MAX_FILE_LINES} lines (counted as wc -l counts them), migrations aside`, () => {
    const files = limitedFiles();
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`holds no function over ${MAX_FUNCTION_LINES} lines, migrations aside`, () => {
    // The count on a known text first: an arrow of 81 lines held by a constant, a method of 2 inside it.
    const known = `const long = () => {\n  class A {\n    m() {\n    }\n  }\n${'  1;\n'.repeat(74)}  return 1;\n};\n`;
    expect(functionSpans('known.ts', known).map((s) => [s.at, s.lines])).toEqual([
      ['known.ts:1 long', 81],
      ['known.ts:3 m', 2],
    ]);
    const spans = limitedFiles().flatMap((file) => functionSpans(file));
    expect(spans.length).toBeGreaterThan(1000);
    expect(spans.filter(({ lines }) => lines > MAX_FUNCTION_LINES)).toEqual([]);
  });
});
