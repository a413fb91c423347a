#!/usr/bin/env node
// What a rebuild of erc_transfers could be at best, with no JavaScript at all between the raw pages
// and the Parquet file: DuckDB's own JSON reader over the decompressed pages, the table's columns
// projected in SQL (lower-cased addresses, the amount's two forms, the token's fields), written as
// the lake writes them (zstd level 1), one thread, within DuckDB memory limits of 512 MB (a writer's)
// and 300 MB (the rebuild's peak bound). No check of any value,
// no reject, no row dropped as the run dropped it: a floor under any rebuild, not a rebuild. Set
// beside the ceiling `chainlake rebuild` is measured against (JSON.parse of the same pages, one
// thread) and the brotli decompression of the raw files. Prints figures; asserts nothing.
// Usage: node bench/rebuild-floor.mjs <a lake kept by `node bench/cpu.mjs --keep`>
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';
import { fmt } from './common.mjs';

/** The floor's figures for a lake's erc_transfers, as lines to print. */
export async function rebuildFloor(lake, memories = ['512MB', '300MB']) {
  const raw = join(lake, '_raw', 'erc_transfers');
  const work = mkdtempSync(join(tmpdir(), 'chainlake-bench-floor-'));
  const lines = [];

  const party = 'STRUCT(address VARCHAR, name VARCHAR, symbol VARCHAR, decimals INTEGER, logoUri VARCHAR)';
  const token = 'STRUCT(address VARCHAR, name VARCHAR, symbol VARCHAR, decimals INTEGER, logoUri VARCHAR, tokenId VARCHAR, tokenUri VARCHAR, metadata JSON, price STRUCT(currencyCode VARCHAR, value VARCHAR))';
  const item = `STRUCT(blockNumber VARCHAR, blockTimestamp BIGINT, blockHash VARCHAR, txHash VARCHAR, logIndex INTEGER, "from" ${party}, "to" ${party}, value VARCHAR, erc20Token ${token}, erc721Token ${token}, erc1155Token ${token})`;
  const copy = `COPY (SELECT '43114' AS chain_id, CAST(t.blockNumber AS BIGINT) AS block_number, to_timestamp(t.blockTimestamp) AS block_timestamp,
    t.blockHash AS block_hash, t.txHash AS tx_hash, t.logIndex AS log_index,
    lower(t."from".address) AS from_address, t."from".name AS from_name, t."from".symbol AS from_symbol, t."from".decimals AS from_decimals, t."from".logoUri AS from_logo_uri,
    lower(t."to".address) AS to_address, t."to".name AS to_name, t."to".symbol AS to_symbol, t."to".decimals AS to_decimals, t."to".logoUri AS to_logo_uri,
    TRY_CAST(TRY_CAST(t.value AS HUGEINT) AS DECIMAL(38,0)) AS value, t.value AS value_raw,
    lower(coalesce(t.erc20Token.address, t.erc721Token.address, t.erc1155Token.address)) AS token_address,
    CASE WHEN t.erc20Token IS NOT NULL THEN 'ERC-20' WHEN t.erc721Token IS NOT NULL THEN 'ERC-721' ELSE 'ERC-1155' END AS token_type,
    coalesce(t.erc721Token.tokenId, t.erc1155Token.tokenId) AS token_id,
    coalesce(t.erc20Token.name, t.erc721Token.name) AS token_name, coalesce(t.erc20Token.symbol, t.erc721Token.symbol) AS token_symbol,
    t.erc20Token.decimals AS token_decimals, t.erc20Token.logoUri AS token_logo_uri, coalesce(t.erc721Token.tokenUri, t.erc1155Token.tokenUri) AS token_uri,
    coalesce(t.erc721Token.metadata, t.erc1155Token.metadata) AS token_metadata,
    t.erc20Token.price.currencyCode AS token_price_currency, t.erc20Token.price.value AS token_price
    FROM (SELECT unnest(transfers) AS t FROM read_ndjson('${work}/*.ndjson', columns={transfers: '${item}[]'}, maximum_object_size=67108864)))
    TO '${work}/floor.parquet' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`;
  // The child: DuckDB alone in a process of its own, so that its peak RSS is its own.
  const child = (memory) => `
  import { DuckDBInstance } from '${import.meta.resolve('@duckdb/node-api')}';
  const db = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '${memory}' });
  const c = await db.connect();
  const t = performance.now();
  await c.run(${JSON.stringify(copy)});
  const seconds = (performance.now() - t) / 1000;
  const rows = Number((await c.runAndReadAll("SELECT count(*) FROM '${work}/floor.parquet'")).getRows()[0][0]);
  console.log(JSON.stringify({ seconds, rows }));
  `;

  try {
    let texts = 0;
    let bytes = 0;
    let decompress = 0;
    let parse = 0;
    let parsed = 0;
    for (const f of readdirSync(raw).sort()) {
      const compressed = readFileSync(join(raw, f));
      let t = performance.now();
      const text = brotliDecompressSync(compressed);
      decompress += performance.now() - t;
      bytes += text.length;
      writeFileSync(join(work, `${texts++}.ndjson`), text);
      const pages = text.toString('utf8').split('\n');
      t = performance.now();
      for (const l of pages) if (l) parsed += JSON.parse(l).transfers.length;
      parse += performance.now() - t;
    }
    const ceiling = parsed / (parse / 1000);
    lines.push(`${texts} raw files, ${fmt(Math.round(bytes / 2 ** 20))} MiB of pages, ${fmt(parsed)} items`);
    lines.push(`  the ceiling: JSON.parse of the pages ${fmt(Math.round(ceiling))} rows/s (${(parse / 1000).toFixed(2)} s, one thread); brotli decompression ${(decompress / 1000).toFixed(2)} s`);
    for (const memory of memories) {
      const script = join(work, 'floor.mjs');
      writeFileSync(script, child(memory));
      rmSync(join(work, 'floor.parquet'), { force: true });
      const out = await new Promise((resolve, reject) => {
        const p = spawn('/usr/bin/time', ['-f', 'maxrss_kb=%M cpu=%U+%S', process.execPath, script]);
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (c) => (stdout += c));
        p.stderr.on('data', (c) => (stderr += c));
        p.on('error', reject);
        p.on('close', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`DuckDB's copy (${memory}) exited ${code}: ${stderr.slice(-2000)}`))));
      });
      const r = JSON.parse(out.stdout.trim().split('\n').pop());
      const rss = Number(/maxrss_kb=(\d+)/.exec(out.stderr)?.[1]) / 1024;
      const cpu = /cpu=([\d.]+)\+([\d.]+)/.exec(out.stderr);
      lines.push(`  DuckDB alone at ${memory}, pages -> zstd Parquet, no checks: ${fmt(r.rows)} rows in ${r.seconds.toFixed(2)} s (${(r.rows / r.seconds / ceiling).toFixed(2)} of the ceiling; after the decompression ${(r.rows / (r.seconds + decompress / 1000) / ceiling).toFixed(2)}), process CPU ${cpu ? (Number(cpu[1]) + Number(cpu[2])).toFixed(1) : '?'} s, peak RSS ${fmt(Math.round(rss))} MB`);
    }
    return lines;
  } finally {
    rmSync(work, { recursive: true, force: true });
}
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const lake = process.argv[2];
  if (!lake) {
    console.error('usage: node bench/rebuild-floor.mjs <lake kept by bench/cpu.mjs --keep> (FLOOR_MEMORY=512MB,300MB)');
    process.exit(2);
  }
  for (const line of await rebuildFloor(lake, process.env.FLOOR_MEMORY?.split(','))) console.log(line);
}
