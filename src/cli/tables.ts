// The table reference, from the stream declarations: `chainlake tables [name]` prints it in a
// terminal and `make docs` writes it to docs/tables.md (src/cli/docs.ts). Both render the same
// facts (tableFacts) in one function each for the list and for a table, as markdown or as text.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { didYouMean } from '../closest.js';
import { textTable } from '../text.js';
import { strategyOf } from '../pipeline/strategies.js';
import { STREAMS } from '../streams/index.js';
import { UNIX_SECONDS, type StreamDecl } from '../decl/stream.js';
import { columnDoc, landedColumns, unitsOf, UNITS_SUFFIX } from '../transform/columns.js';
import { commandOf, type Globals } from './args.js';

export type Style = 'markdown' | 'text';

function refreshText(d: StreamDecl): string {
  if (d.refresh === 'append')
    return `append from the partition's high-water block on (\`${d.blockCursor!.start}\` = that block; its rows already landed are skipped by key); commits every batch with the page token that continues the listing`;
  const { rows } = strategyOf(d);
  const from = d.timeCursor
    ? d.timeCursor.start
      ? ` Fetches from the newest committed point on (\`${d.timeCursor.start}\`), refetching that point, which the service may still change.`
      : d.timeCursor.settled
        ? ' Pages newest first and stops at the first page older than the newest committed point, or than the oldest committed row that had not settled yet if older; both are refetched, so an unsettled row is refetched every run until it settles.'
        : ' Pages newest first and stops at the first page older than the newest committed point, which is refetched.'
    : ' Refetches the query each run (the endpoint has no time filter).';
  if (d.refresh === 'replace')
    return `replace ${rows}: the listing is the current state, so a complete fetch replaces the committed rows (a row the service stops listing is gone); a run where a partition fails merges by key instead, newest wins, and the next complete run replaces.${from}`;
  return `merge by key into ${rows}, newest wins, in one commit.${from}`;
}

/** The refresh in a few words, for the list of tables. */
function refreshLabel(d: StreamDecl): string {
  if (d.refresh === 'append') return d.blockCursor?.perBlock ? 'append by block' : 'append';
  if (d.timeCursor) return `${d.refresh} from newest point`;
  return `${d.refresh === 'merge' ? 'merge into' : 'replace'} ${strategyOf(d).scope}`;
}

function endpointText(d: StreamDecl): string {
  if (d.service !== 'node') return `\`GET ${d.endpoint}\` (${d.service} service, ${d.weight} CU a request${d.needsApiKey ? '; of the key in `sources.data.apiKey`, which the pipeline must give' : ''})`;
  // The node meters nothing; its streams call JSON-RPC methods (health is a plain GET).
  return d.methods ? `\`POST ${d.endpoint}\` JSON-RPC ${d.methods.map((m) => `\`${m}\``).join(', ')} (node source)` : `\`GET ${d.endpoint}\` (node source)`;
}

/** What the reference says of a table, with `code` spans (the text style drops the backticks). */
function tableFacts(d: StreamDecl): { lines: Array<[string, string[]]>; columns: string[][] } {
  const keys = Object.entries(d.options).map(([k, o]) => `\`${k}\`${o.required ? ' (required)' : ''}: ${o.kind === 'unix_seconds' ? `${UNIX_SECONDS.doc}; ` : ''}${o.doc}`);
  if (d.pageSize.max) keys.push(`\`pageSize\`: ${d.pageSize.min || 1} to ${d.pageSize.max}, default ${d.pageSize.default}${d.pageSize.note ? ` (${d.pageSize.note})` : ''}`);
  return {
    lines: [
      ['endpoint', [endpointText(d)]],
      ['pipeline keys', keys],
      ['refresh', [refreshText(d)]],
      ['key', [`${d.key.map((k) => `\`${k}\``).join(', ')}${d.keyDoc ? ` (${d.keyDoc})` : ''}`]],
      ['files', [`\`<lake>/${d.table}/${d.folder ? `${d.folder.key}=<${d.folder.partition}>/` : ''}*.parquet\``]],
    ],
    columns: [...landedColumns(d), ...unitsOf(d).map((u): [string, string] => [u.name + UNITS_SUFFIX, 'DOUBLE'])].map(([name, type]) => [name, type, columnDoc(d, name)]),
  };
}

/**
 * Words of `s` in lines of at most `width` characters. A longer word (a service path) is cut after
 * its slashes into pieces that fit, or gets a line of its own when it has none.
 */
export function wrap(s: string, width: number): string[] {
  const words = s.split(/\s+/).filter(Boolean).flatMap((w) => (w.length > width ? pack(w.split(/(?<=\/)/), width, '') : [w]));
  return pack(words, width, ' ');
}

/** `parts` joined by `joiner`, in order, into runs of at most `width` characters (a longer part alone). */
function pack(parts: string[], width: number, joiner: string): string[] {
  const out: string[] = [];
  let run = '';
  for (const part of parts) {
    if (run && run.length + joiner.length + part.length > width) {
      out.push(run);
      run = part;
    } else run = run ? `${run}${joiner}${part}` : part;
  }
  return [...out, run];
}

/** textTable with its last column wrapped so that every line fits `width`. */
function wrappedTable(header: string[], rows: string[][], width: number): string {
  const lead = header.slice(0, -1).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)) + 2);
  const room = Math.max(20, width - lead.reduce((a, b) => a + b, 0));
  const lines = rows.flatMap((r) => wrap(r.at(-1)!, room).map((part, i) => [...(i ? r.slice(0, -1).map(() => '') : r.slice(0, -1)), part]));
  return textTable(header, lines);
}

const plain = (s: string) => s.replace(/`/g, '');

/** One table's reference: its doc, where it is served, its pipeline keys, refresh, key, files and columns. */
export function tableReference(d: StreamDecl, style: Style, width = 100): string {
  const { lines, columns } = tableFacts(d);
  if (style === 'markdown')
    return [
      `## ${d.table}`,
      '',
      `${d.doc}.`,
      '',
      ...lines.map(([label, parts]) => `- ${label}: ${parts.join('; ')}`),
      '',
      '| column | type | meaning |',
      '|---|---|---|',
      ...columns.map((c) => `| ${c.join(' | ')} |`),
      '',
    ].join('\n');
  const indent = Math.max(...lines.map(([label]) => label.length)) + 2;
  const facts = lines.flatMap(([label, parts]) =>
    parts.flatMap((part, p) => wrap(plain(part), width - indent).map((text, i) => `${(p || i ? '' : label).padEnd(indent)}${text}`)),
  );
  return [...wrap(`${d.table}: ${d.doc}.`, width), '', ...facts, '', wrappedTable(['column', 'type', 'meaning'], columns, width), ''].join('\n');
}

/** Every table with its service, refresh and doc; in markdown each name links to its section. */
export function tableList(style: Style, width = 100): string {
  const rows = STREAMS.map((d) => [style === 'markdown' ? `[${d.table}](#${d.table})` : d.table, d.service, refreshLabel(d), style === 'markdown' ? d.doc : plain(d.doc)]);
  if (style === 'markdown') return ['| table | service | refresh | what it holds |', '|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`), ''].join('\n');
  return `${wrappedTable(['table', 'service', 'refresh', 'what it holds'], rows, width)}\n`;
}

/** `chainlake tables [name]`: the list, or one table's reference; an unknown name is a usage error. */
export function printTables(a: { name?: string }): number {
  let text: string;
  if (a.name === undefined) text = `${tableList('text')}\nchainlake tables <name> prints the reference of one.\n`;
  else {
    const d = STREAMS.find((s) => s.table === a.name);
    if (!d) throw new UsageError(`tables ${a.name}: no such table${didYouMean(a.name, STREAMS.map((s) => s.table))} (\`chainlake tables\` lists them)`);
    text = tableReference(d, 'text');
  }
  process.stdout.write(text);
  return 0;
}

const tablesFlags = (y: Argv<Globals>) => y.positional('name', { type: 'string', describe: 'a table, e.g. erc_transfers' });

export const tablesCommand = commandOf('tables [name]', "the tables, or one table's reference (columns, key, refresh) from its declaration", tablesFlags, printTables);
