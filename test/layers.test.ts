// The stages of src/ import downward only, and no module reaches itself again through its imports.
// The order of the stages is written once, here; a file's stage is its folder under src/ (or, for
// a file directly in src/, its name).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Lowest first: a file may import files of its own stage and of the stages before it, never of a
 * stage after it. At the bottom the vocabulary every stage shares: errors, the package version, the identifier codec,
 * the rules of the request bodies, UTF-8 pages as bytes, JSON numbers kept as sent, service text
 * made inert for a terminal or a spreadsheet, and the declarations (decl/: streams, pages, the
 * client port). Then the runtime, in the order a row travels (the tables' Iceberg metadata,
 * iceberg/, kept with each commit of the files the writer wrote), then what reads the lake, the
 * commands, and the library's entry.
 */
const ORDER = [
  'errors',
  'version',
  'ids',
  'requests',
  'bytes',
  'json',
  'text',
  'closest',
  'decl',
  'tables',
  'sources',
  'cluster',
  'state',
  'extract',
  'streams',
  'config',
  'transform',
  'load',
  'iceberg',
  'pipeline',
  'warehouse',
  'operations',
  'cli',
  'index',
];

/**
 * The simulator stands beside the runtime, not in it: it may import the vocabulary up to this
 * stage (so that it and chainlake agree on what is valid), and only the cli starts it.
 */
const SIMULATOR = { stage: 'simulator', importsUpTo: 'json', importedFrom: 'cli' };

const SRC = resolve('src');

interface Import {
  /** Files relative to src/. */
  from: string;
  to: string;
  line: number;
  spec: string;
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
    })
    .sort();
}

const KEYWORDS_BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'in', 'of', 'delete', 'void', 'throw', 'new', 'else', 'do', 'yield', 'await']);

/**
 * The code of a file with comments blanked and every string literal replaced by `"` + placeholder
 * of the same length, so positions (and lines) stay those of the file; `strings` maps the position
 * of a placeholder's opening quote to the literal's value. Template literals keep their `${}` code.
 */
function mask(src: string): { code: string; strings: Map<number, string> } {
  const out: string[] = [];
  const strings = new Map<number, string>();
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  let i = 0;
  let prev = ''; // the last significant code character, or a word
  const scan = (end: (c: string) => boolean): void => {
    while (i < src.length && !end(src[i]!)) {
      const c = src[i]!;
      const d = src[i + 1];
      if (c === '/' && d === '/') {
        const j = src.indexOf('\n', i);
        const stop = j < 0 ? src.length : j;
        out.push(blank(src.slice(i, stop)));
        i = stop;
      } else if (c === '/' && d === '*') {
        const j = src.indexOf('*/', i + 2);
        const stop = j < 0 ? src.length : j + 2;
        out.push(blank(src.slice(i, stop)));
        i = stop;
      } else if (c === "'" || c === '"') {
        let j = i + 1;
        let value = '';
        while (j < src.length && src[j] !== c && src[j] !== '\n') {
          if (src[j] === '\\') {
            value += src[j + 1];
            j += 2;
          } else value += src[j++];
        }
        strings.set(i, value);
        out.push('"' + blank(src.slice(i + 1, j)).replace(/ /g, '~') + '"');
        i = j + 1;
        prev = 'x';
      } else if (c === '`') {
        out.push('`');
        i++;
        while (i < src.length && src[i] !== '`') {
          if (src[i] === '\\') {
            out.push(blank(src.slice(i, i + 2)));
            i += 2;
          } else if (src[i] === '$' && src[i + 1] === '{') {
            out.push('${');
            i += 2;
            let depth = 0;
            scan((ch) => {
              if (ch === '{') depth++;
              if (ch === '}' && depth-- === 0) return true;
              return false;
            });
            out.push('}');
            i++;
          } else out.push(blank(src[i++]!));
        }
        out.push('`');
        i++;
        prev = 'x';
      } else if (c === '/' && !(/[\w$)\]]/.test(prev) && !KEYWORDS_BEFORE_REGEX.has(prev))) {
        // A regular expression literal: its body may hold quotes and slashes.
        let j = i + 1;
        let inClass = false;
        while (j < src.length && (src[j] !== '/' || inClass) && src[j] !== '\n') {
          if (src[j] === '\\') j++;
          else if (src[j] === '[') inClass = true;
          else if (src[j] === ']') inClass = false;
          j++;
        }
        j++;
        while (/[a-z]/.test(src[j] ?? '')) j++;
        out.push('/' + blank(src.slice(i + 1, j)).replace(/ /g, '~'));
        i = j;
        prev = 'x';
      } else if (/[\w$]/.test(c)) {
        const m = /^[\w$]+/.exec(src.slice(i, i + 64))!;
        out.push(m[0]);
        i += m[0].length;
        prev = m[0];
      } else {
        out.push(c);
        i++;
        if (!/\s/.test(c)) prev = c;
      }
    }
  };
  scan(() => false);
  return { code: out.join(''), strings };
}

/**
 * Every import of a file's source: static (`import`, `import type`, `export ... from`) and dynamic.
 * An `import type` or `export type` loads nothing when the file runs: it says so (typeOnly).
 */
function importsOf(src: string): Array<{ spec: string; line: number; typeOnly?: true }> {
  const { code, strings } = mask(src);
  const found: Array<{ spec: string; line: number; typeOnly?: true }> = [];
  const lineOf = (at: number) => src.slice(0, at).split('\n').length;
  const statics = /\b(?:import|export)\b(?:\s+type\b)?[^;"`]*?\bfrom\s*(?=")|\bimport\s*(?=")/g;
  for (const m of code.matchAll(statics)) {
    const at = m.index + m[0].length;
    found.push({ spec: strings.get(at)!, line: lineOf(m.index), ...(/^(?:import|export)\s+type\b/.test(m[0]) ? { typeOnly: true as const } : {}) });
  }
  for (const m of code.matchAll(/\bimport\s*\(\s*/g)) {
    const at = m.index + m[0].length;
    const spec = strings.get(at);
    // A computed specifier cannot be checked; none is allowed.
    found.push({ spec: spec ?? `<computed: ${src.slice(at, src.indexOf(')', at))}>`, line: lineOf(m.index) });
  }
  return found;
}

function stageOf(file: string): string {
  const [head] = file.split('/');
  return head!.replace(/\.ts$/, '');
}

/** The imports between files of src/ (a package import is no stage's business). */
function graph(): Import[] {
  const out: Import[] = [];
  for (const abs of sourceFiles()) {
    const from = relative(SRC, abs);
    for (const { spec, line } of importsOf(readFileSync(abs, 'utf8'))) {
      if (!spec.startsWith('.') && !spec.startsWith('<computed')) continue;
      const to = spec.startsWith('<computed') ? spec : relative(SRC, resolve(dirname(abs), spec.replace(/\.js$/, '.ts')));
      out.push({ from, to, line, spec });
    }
  }
  return out;
}

/** Why an import goes against the order, or undefined when it is fine. */
function wrongWay(i: Import): string | undefined {
  if (i.to.startsWith('<computed')) return `a dynamic import of a computed specifier ${i.to}`;
  if (i.to.startsWith('..')) return `${i.spec} is outside src/`;
  const [a, b] = [stageOf(i.from), stageOf(i.to)];
  if (a === b) return undefined;
  const rank = (s: string) => ORDER.indexOf(s);
  for (const s of [a, b]) if (s !== SIMULATOR.stage && rank(s) < 0) return `stage ${s} is not in the order of test/layers.test.ts`;
  if (a === SIMULATOR.stage) return rank(b) <= rank(SIMULATOR.importsUpTo) ? undefined : `the simulator imports ${b}, above ${SIMULATOR.importsUpTo}`;
  if (b === SIMULATOR.stage) return rank(a) >= rank(SIMULATOR.importedFrom) ? undefined : `${a} imports the simulator (only ${SIMULATOR.importedFrom} starts it)`;
  return rank(b) > rank(a) ? `${a} imports ${b}, a stage above it` : undefined;
}

/** Circles of imports, each as the files around it (depth-first search; one circle per back edge). */
function circles(imports: Import[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const i of imports) {
    next.set(i.from, (next.get(i.from) ?? new Set()).add(i.to));
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const found: string[][] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    path.push(f);
    for (const t of next.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...path.slice(path.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of [...next.keys()].sort()) if (!state.has(f)) visit(f);
  return found;
}

describe('the import scanner', () => {
  it('finds static, type-only, re-exported, multi-line and dynamic imports, and nothing in comments, strings or regular expressions', () => {
    const src = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      'import {',
      '  c,',
      "  type D,",
      "} from './c.js';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "import './side.js';",
      "const g = await import('./g.js');",
      "// import { no } from './comment.js';",
      "/* import('./block-comment.js') */",
      "const s = \"import { no } from './string.js'\";",
      "const t = `${await import('./in-template.js')} import('./template-text.js')`;",
      "const r = /from '.\\/regex.js'/;",
      "const q = x / 2; import { h } from './h.js';",
      'const k = await import(name);',
    ].join('\n');
    expect(importsOf(src)).toEqual([
      { spec: './a.js', line: 1 },
      { spec: '../b.js', line: 2, typeOnly: true },
      { spec: './c.js', line: 3 },
      { spec: './e.js', line: 7 },
      { spec: './f.js', line: 8 },
      { spec: './side.js', line: 9 },
      { spec: './h.js', line: 16 },
      { spec: './g.js', line: 10 },
      { spec: './in-template.js', line: 14 },
      { spec: '<computed: name>', line: 17 },
    ]);
  });

  it('agrees with the compiler on every import between files of src/', () => {
    // tsc's own account of why each file is in the program: "Imported via '<spec>' from file '<file>'".
    const explained = execFileSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--noEmit', '--explainFiles'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const fromCompiler = new Set<string>();
    let file = '';
    for (const line of explained.split('\n')) {
      if (/^\S/.test(line)) file = line.trim();
      const m = /Imported via '[^']*' from file '(src\/[^']+)'/.exec(line);
      if (m && file.startsWith('src/')) fromCompiler.add(`${m[1]!.slice(4)} -> ${file.slice(4)}`);
    }
    const fromScanner = new Set(graph().map((i) => `${i.from} -> ${i.to}`));
    expect(fromCompiler.size).toBeGreaterThan(100);
    expect([...fromScanner].sort()).toEqual([...fromCompiler].sort());
  });

  it('catches an import against the order and a circle', () => {
    const up: Import = { from: 'sources/client.ts', to: 'config/pipeline.ts', line: 1, spec: '../config/pipeline.js' };
    expect(wrongWay(up)).toBe('sources imports config, a stage above it');
    expect(wrongWay({ ...up, to: 'simulator/world.ts' })).toBe('sources imports the simulator (only cli starts it)');
    expect(wrongWay({ ...up, from: 'simulator/evm.ts', to: 'streams/index.ts' })).toBe('the simulator imports streams, above json');
    expect(wrongWay({ ...up, from: 'config/pipeline.ts', to: 'sources/client.ts' })).toBeUndefined();
    const ring = [
      { ...up, from: 'transform/a.ts', to: 'transform/b.ts' },
      { ...up, from: 'transform/b.ts', to: 'transform/c.ts' },
      { ...up, from: 'transform/c.ts', to: 'transform/a.ts' },
    ];
    expect(circles(ring)).toEqual([['transform/a.ts', 'transform/b.ts', 'transform/c.ts', 'transform/a.ts']]);
    expect(circles(ring.slice(0, 2))).toEqual([]);
  });
});

describe('src/', () => {
  const imports = graph();

  it('imports downward only', () => {
    const bad = imports.flatMap((i) => {
      const why = wrongWay(i);
      return why ? [`src/${i.from}:${i.line}: ${why} (${i.spec})`] : [];
    });
    expect(bad).toEqual([]);
  });

  it('has every stage in the order, and every stage of the order', () => {
    const stages = new Set(sourceFiles().map((f) => stageOf(relative(SRC, f))));
    expect([...stages].sort()).toEqual([...ORDER, SIMULATOR.stage].sort());
  });

  it('has no circle of imports', () => {
    expect(circles(imports).map((c) => c.join(' -> '))).toEqual([]);
  });
});

/**
 * The files of src/ that `file` loads when it runs, itself included, and the packages and Node
 * built-ins they import: type-only imports load nothing.
 */
function loads(file: string): { files: string[]; outside: string[] } {
  const files = new Set<string>();
  const outside = new Set<string>();
  const visit = (f: string): void => {
    if (files.has(f)) return;
    files.add(f);
    for (const i of importsOf(readFileSync(join(SRC, f), 'utf8'))) {
      if (i.typeOnly) continue;
      if (!i.spec.startsWith('.')) outside.add(i.spec);
      else visit(relative(SRC, resolve(dirname(join(SRC, f)), i.spec.replace(/\.js$/, '.ts'))));
    }
  };
  visit(file);
  return { files: [...files].sort(), outside: [...outside].sort() };
}

/** The pure machines and codecs: they decide on what they are given, and leave the I/O and the time to their callers. */
const PURE = ['pipeline/window.ts', 'pipeline/series.ts', 'pipeline/settle.ts', 'pipeline/block_search.ts', 'state/names.ts', 'state/cursor.ts'];
/** What they may load besides each other: vocabulary that loads nothing itself. */
const LEAVES = ['errors.ts', 'text.ts', 'transform/gate.ts'];

describe('the pure machines and codecs', () => {
  it('load, transitively, only each other and leaves of the vocabulary: no store, no package, no Node built-in but hashing', () => {
    for (const file of PURE) {
      const { files, outside } = loads(file);
      expect(files.filter((f) => !PURE.includes(f) && !LEAVES.includes(f)), file).toEqual([]);
      expect(outside.filter((spec) => spec !== 'node:crypto'), file).toEqual([]);
    }
    for (const file of LEAVES) expect(loads(file).files, file).toEqual([file]);
  });

  it('the check follows imports through other files, and not type-only ones', () => {
    expect(loads('pipeline/worker.ts').files).toEqual(expect.arrayContaining(['pipeline/settle.ts', 'state/store.ts', 'state/s3.ts', 'cluster/queue.ts']));
    expect(loads('pipeline/worker.ts').outside).toEqual(expect.arrayContaining(['pg']));
    // block_search.ts names state/block_times.ts's types only.
    expect(loads('pipeline/block_search.ts').files).not.toContain('state/block_times.ts');
  });
});

describe('the refresh machines', () => {
  // pipeline/window.ts and series.ts decide; the drivers around them do the I/O and keep the time.
  it('import no package and no Node built-in, and read no clock and set no timer', () => {
    for (const file of ['pipeline/window.ts', 'pipeline/series.ts', 'pipeline/settle.ts', 'pipeline/block_search.ts', 'state/cursor.ts']) {
      const src = readFileSync(join(SRC, file), 'utf8');
      const outside = importsOf(src).filter((i) => !i.spec.startsWith('.'));
      expect(outside, file).toEqual([]);
      const code = mask(src).code;
      expect(code.match(/\b(Date\.now|new Date|performance\.now|setTimeout|setInterval|process\.)\b/g), file).toBeNull();
    }
  });
});
