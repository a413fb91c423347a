// A declaration's columns compiled into one function per stream: item -> staged line. Generic
// per-column readers and converters (closures, dispatch, a row array, a join) cost most of the
// transform's time in profiles; one straight-line function that V8 optimises as a whole runs ~2x
// faster. The generated code only reads item fields and calls the converters in values.ts; every
// name in it comes from the declaration, never from the data.
import type { Column, DeriveContext, StreamDecl } from '../decl/stream.js';
import * as V from './values.js';
import { FIELD, NULL, stageText } from './staging.js';
import { COLUMN_TYPES, stagedColumns } from './columns.js';

/** What a compiled row function reports besides the line: the block and key, and counters. */
export interface RowScratch {
  /** Value of the block cursor column (append streams). */
  block: number;
  /** The row's time in Unix seconds, NaN for none: the block time of an append stream, a series' point. */
  time: number;
  /** The row's key (the declaration's `key`) as staged text: rows a listing sends again are told by it. */
  key: string;
  /** Amounts over 38 digits in this row. */
  over: number;
}

/** Returns the staged line of an item, or a `V.Bad` with the reason it is rejected. */
export type RowFunction = (item: Record<string, unknown>, s: RowScratch, ctx: DeriveContext) => string | V.Bad;

function access(path: string): string {
  return 'item' + path.split('.').map((k) => `?.[${JSON.stringify(k)}]`).join('');
}

/** The column a row's time is read from, if it has one (RowScratch.time). */
export function timeColumn(decl: StreamDecl): string | undefined {
  return decl.blockCursor ? decl.blockCursor.time : decl.timeCursor?.column;
}

/** Compiles a declaration; `values` are the partition's values for partition columns. */
export function compileRows(decl: StreamDecl, values: Record<string, string>): RowFunction {
  const lines: string[] = ['let v, x;'];
  const fields: string[] = [];
  const constants: string[] = [];
  const derives: Array<Column['derive']> = [];
  decl.columns.forEach((c, i) => {
    const f = `f${i}`;
    const q = JSON.stringify(c.name);
    const spec = COLUMN_TYPES[c.type];
    if (c.partition) {
      // A partition value is the same for every row: staged once, outside the function.
      const value = values[c.partition];
      constants.push(value === undefined ? JSON.stringify(NULL) : JSON.stringify(spec.parts[0]!.text ? stageText(value) : value));
      fields.push(`K[${constants.length - 1}]`);
      return;
    }
    let read: string;
    if (c.derive) {
      derives.push(c.derive);
      read = `D[${derives.length - 1}](item, ctx)`;
    } else read = (Array.isArray(c.from) ? c.from : [c.from!]).map(access).join(' ?? ');
    lines.push(`v = ${read};`);
    const missing = c.required ? `return new V.Bad(${JSON.stringify(`${c.name}: required, missing`)});` : c.type === 'amount' ? `${f} = N; ${f}r = N;` : `${f} = N;`;
    if (c.type === 'amount') {
      lines.push(`let ${f}, ${f}r;`);
      lines.push(`if (v === undefined || v === null) { ${missing} } else { x = V.${spec.convert}(v); if (x instanceof V.Bad) return new V.Bad(${q} + ': ' + x.reason); if (x.decimal === null) { s.over++; ${f} = N; } else ${f} = x.decimal; ${f}r = x.raw; }`);
      fields.push(f, `${f}r`);
      return;
    }
    lines.push(`let ${f};`);
    lines.push(`if (v === undefined || v === null) { ${missing} } else { x = V.${spec.convert}(v); if (x instanceof V.Bad) return new V.Bad(${q} + ': ' + x.reason); ${f} = ${spec.stage!}; }`);
    fields.push(f);
  });
  const names = stagedColumns(decl).map((c) => c.name);
  const fieldOf = (name: string) => fields[names.indexOf(name)]!;
  if (decl.blockCursor) lines.push(`s.block = Number(${fieldOf(decl.blockCursor.column)});`);
  const time = timeColumn(decl);
  if (time !== undefined) {
    if (!names.includes(time)) throw new Error(`${decl.table}: the time column ${time} is not one of its columns`);
    lines.push(`s.time = Number(${fieldOf(time)});`);
  }
  if (decl.key.length) lines.push(`s.key = ${decl.key.map(fieldOf).join(" + '|' + ")};`);
  lines.push(`return ${fields.join(' + F + ')};`);
  const body = lines.join('\n');
  const make = new Function('V', 'stageText', 'F', 'N', 'K', 'D', `return function row(item, s, ctx) {\n${body}\n};`) as (
    v: typeof V,
    st: typeof stageText,
    f: string,
    n: string,
    k: string[],
    d: Array<Column['derive']>,
  ) => RowFunction;
  return make(V, stageText, FIELD, NULL, constants.map((c) => JSON.parse(c) as string), derives);
}
