// The warehouse file around the commands that change the lake (run, compact, rebuild): the flag,
// the check of its file before the command starts, and the rewrite after it. Both import the
// warehouse file's writer (DuckDB) when they run: start-up (main.ts).
import { existsSync } from 'node:fs';
import type { WarehouseResult } from '../warehouse/file.js';
import { readableLake, readFolder } from '../state/cache.js';
import { isObjectUrl, parseS3Url } from '../state/location.js';
import { inert } from '../text.js';

export const warehouseOption = {
  type: 'string',
  requiresArg: true,
  describe: "DuckDB file to rewrite with views of the lake afterwards (default: <lake>.warehouse.duckdb beside the lake folder; --no-warehouse: none); another lake's warehouse file is never replaced",
} as const;

/** `--warehouse FILE`, nothing (the default), or `--no-warehouse` (false). */
export type WarehouseFlag = string | false | undefined;

/**
 * An s3:// lake's warehouse file is written after a command only when --warehouse names it: its
 * views read the lake's local read copy, which the write brings up to date (a download).
 */
const skipped = (lake: string, flag: WarehouseFlag) => flag === false || (isObjectUrl(lake) && flag === undefined);

/** The s3:// URL of a lake on object storage, which its warehouse file's marker records (file.ts). */
export const urlOf = (lake: string): string | undefined => (isObjectUrl(lake) ? parseS3Url(lake).url : undefined);

export async function checkWarehouse(lake: string, flag: WarehouseFlag): Promise<void> {
  if (skipped(lake, flag)) return;
  const { checkWarehouseTarget } = await import('../warehouse/file.js');
  await checkWarehouseTarget(isObjectUrl(lake) ? readFolder(lake) : lake, flag, '--warehouse', urlOf(lake));
}

export function wroteWarehouse(r: WarehouseResult): string {
  if (r.unchanged) return r.rows ? `the warehouse file ${r.file} is up to date: its rows are those of the lake's committed files (${r.rows.tables} tables), so it was left as it is` : `the warehouse file ${r.file} is up to date: it was written for the lake's committed files as they are, so it was left as it is`;
  const lines = [`wrote the warehouse file ${r.file} (${r.tables} table views, ${r.queries} bundled query views)`];
  if (r.moved) lines.push(`  it replaced the warehouse file of ${r.moved}, which holds no lake any more (moved or deleted)`);
  // A lake with no rows yet (a first run that failed) has nothing to say of them.
  if (r.rows && (r.rows.tables || r.rows.removed)) lines.push(`  with the rows of ${r.rows.tables} tables: the rows of ${r.rows.added} files added, of ${r.rows.removed} removed${r.rows.kept ? `, of ${r.rows.kept} compacted files kept as they were` : ''} (${r.rows.copied} tables copied whole)`);
  for (const s of r.skipped) lines.push(`  ${s.name}: not a view until the lake has what it reads (${inert(s.why)})`);
  return lines.join('\n');
}

/**
 * After `command` changed the lake: rewrites the warehouse file. A failure is a warning on stderr
 * and the command's exit code stands: the lake is what matters, and `chainlake warehouse` can write
 * the file later.
 */
export async function refreshWarehouse(command: string, lake: string, flag: WarehouseFlag): Promise<void> {
  if (skipped(lake, flag) || (!isObjectUrl(lake) && !existsSync(lake))) return;
  try {
    const { writeWarehouse } = await import('../warehouse/file.js');
    process.stdout.write(wroteWarehouse(await writeWarehouse(await readableLake(lake), { out: flag || undefined, flag: '--warehouse', url: urlOf(lake) })) + '\n');
  } catch (err) {
    const again = `chainlake warehouse --lake ${lake}${flag === undefined ? '' : ` --out ${flag}`}`;
    process.stderr.write(`chainlake: warning: ${inert((err as Error).message)}; the ${command} itself is not affected, and \`${again}\` writes the file\n`);
  }
}
