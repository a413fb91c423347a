import { describe, expect, it } from 'vitest';
import { Transformer, unstage } from '../../src/transform/rows.js';
import { ListingGate } from '../../src/pipeline/window.js';
import { stagedColumns } from '../../src/transform/columns.js';
import { ercTransfers } from '../../src/streams/erc_transfers.js';
import { internalTransactions } from '../../src/streams/internal_transactions.js';
import { delegators } from '../../src/streams/delegators.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { RAW_CHUNK, readRawPages } from '../../src/load/raw.js';
import { fromBytes } from '../../src/bytes.js';

const partition = { id: '43114/0xabc', path: {}, query: {}, values: { chainId: '43114', address: '0x' + 'a'.repeat(40) } };
const addr = (n: string) => ({ address: '0x' + n.repeat(40), name: 'N', symbol: 'S', decimals: 18, logoUri: 'u' });

function transfer(extra: Record<string, unknown>) {
  return { blockNumber: '100', blockTimestamp: 1700000000, blockHash: '0xbh', txHash: '0xth', from: addr('A'), to: { address: '0x' + 'b'.repeat(40) }, logIndex: 3, ...extra };
}

function rowsOf(t: Transformer) {
  const b = t.take();
  const staged = stagedColumns(t.decl);
  return { b, rows: b.lines.map((l) => unstage(staged, l)) };
}

describe('transform of erc_transfers', () => {
  it('lands all three forms with their token type and id', () => {
    const gate = new ListingGate(undefined);
    const t = new Transformer(ercTransfers, partition, {}, gate);
    t.push([
      transfer({ value: '5', erc20Token: { address: '0x' + 'C'.repeat(40), name: 'T', symbol: 'TT', decimals: 6, ercType: 'ERC-20' } }),
      transfer({ logIndex: 4, erc721Token: { address: '0x' + 'D'.repeat(40), name: 'N', symbol: 'NN', ercType: 'ERC-721', tokenId: '7', tokenUri: 'x', metadata: { indexStatus: 'indexed' } } }),
      transfer({ logIndex: 5, value: '2', erc1155Token: { address: '0x' + 'E'.repeat(40), ercType: 'ERC-1155', tokenId: '9', tokenUri: 'y', metadata: { indexStatus: 'indexed', decimals: 0 } } }),
    ]);
    const { b, rows } = rowsOf(t);
    expect(b.rejects).toEqual([]);
    expect(rows.map((r) => [r.token_type, r.token_id, r.value, r.value_raw, r.token_address])).toEqual([
      ['ERC-20', null, '5', '5', '0x' + 'c'.repeat(40)],
      ['ERC-721', '7', null, null, '0x' + 'd'.repeat(40)],
      ['ERC-1155', '9', '2', '2', '0x' + 'e'.repeat(40)],
    ]);
    expect(rows[0]!.from_address).toBe('0x' + 'a'.repeat(40));
    expect(rows[0]!.from_decimals).toBe(18);
    expect(rows[0]!.to_name).toBeNull();
    expect(rows[0]!.chain_id).toBe('43114');
    expect(rows[1]!.token_metadata).toBe('{"indexStatus":"indexed"}');
    expect(gate.getTop()).toEqual({ block: 100, keys: expect.any(Array) });
  });

  it('counts values over 38 digits and keeps them exact in raw', () => {
    const t = new Transformer(ercTransfers, partition);
    const big = '1' + '0'.repeat(40);
    t.push([transfer({ value: big, erc20Token: { address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' } })]);
    const { b, rows } = rowsOf(t);
    expect(b.over38).toBe(1);
    expect(rows[0]!.value).toBeNull();
    expect(rows[0]!.value_raw).toBe(big);
  });

  it('sends a row missing a required field or of a wrong type to rejects with the reason and raw JSON', () => {
    const t = new Transformer(ercTransfers, partition);
    const noToken = transfer({ value: '1' });
    const badValue = transfer({ value: '-1', erc20Token: { address: '0x' + 'c'.repeat(40), ercType: 'ERC-20' } });
    t.push([noToken, badValue, 'junk']);
    const { b } = rowsOf(t);
    expect(b.rows).toBe(0);
    expect(b.rejects.map((r) => r.reason)).toEqual([
      'token_address: required, missing',
      'value: expected a non-negative integer as decimal digits, got "-1"',
      'item is not an object',
    ]);
    expect(JSON.parse(b.rejects[1]!.raw)).toEqual(badValue);
  });
});

describe('internal transaction ids', () => {
  const itx = (extra: Record<string, unknown> = {}) => ({
    blockNumber: '5', blockTimestamp: 1700000000, blockHash: '0xb', txHash: '0xt', from: addr('A'), to: addr('B'),
    internalTxType: 'CALL', value: '1', isReverted: false, gasUsed: '21000', gasLimit: '30000', ...extra,
  });

  it('are stable across refetches and tell identical siblings apart, across pages', () => {
    const once = new Transformer(internalTransactions, partition);
    once.push([itx(), itx(), itx({ value: '2' })]);
    const a = rowsOf(once).rows.map((r) => r.internal_tx_id);
    const split = new Transformer(internalTransactions, partition);
    split.push([itx()]);
    const carry = split.getCarry();
    const resumed = new Transformer(internalTransactions, partition, carry);
    resumed.push([itx(), itx({ value: '2' })]);
    const b = [...rowsOf(split).rows, ...rowsOf(resumed).rows].map((r) => r.internal_tx_id);
    expect(new Set(a).size).toBe(3);
    expect(b).toEqual(a);
  });
});

describe('delegators', () => {
  it('takes estimates for active/pending and marks them', () => {
    const t = new Transformer(delegators, { id: 'x', path: {}, query: {}, values: { network: 'mainnet' } });
    const base = { txHash: '0x1', nodeId: 'NodeID-x', rewardAddresses: ['avax1x'], amountDelegated: '25000000000', delegationFee: '1', startTimestamp: 1, endTimestamp: 2 };
    t.push([
      { ...base, delegationStatus: 'completed', grossReward: '10', netReward: '9' },
      { ...base, txHash: '0x2', delegationStatus: 'active', estimatedGrossReward: '20', estimatedNetReward: '18' },
    ]);
    const { rows } = rowsOf(t);
    expect(rows.map((r) => [r.gross_reward, r.net_reward_raw, r.reward_is_estimate])).toEqual([
      ['10', '9', false],
      ['20', '18', true],
    ]);
  });
});

describe('high-water block keys', () => {
  const t = (block: string, logIndex: number) =>
    transfer({ blockNumber: block, logIndex, value: '1', erc20Token: { address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' } });

  it('skips rows of the high-water block committed before and keeps its keys with the new ones', () => {
    const g1 = new ListingGate(undefined);
    const first = new Transformer(ercTransfers, partition, {}, g1);
    first.push([t('101', 1), t('100', 2), t('101', 0)]);
    const top = g1.getTop()!;
    expect(top.block).toBe(101);
    expect(top.keys).toHaveLength(2);
    // The next window starts at block 101 again: the block grew by one transfer meanwhile.
    const g2 = new ListingGate(undefined, { skip: top, top });
    const next = new Transformer(ercTransfers, partition, {}, g2);
    next.push([t('101', 0), t('101', 1), t('101', 2)]);
    const b = next.take();
    expect(b.rows).toBe(1);
    expect(b.skipped).toBe(2);
    const after = g2.getTop()!;
    expect(after.block).toBe(101);
    expect(after.keys).toHaveLength(3);
    expect(after.keys).toEqual(expect.arrayContaining(top.keys));
  });
});

describe('pages parsed from their UTF-8 bytes (replay of a bytesSafe stream)', () => {
  const token = { address: '0x' + 'c'.repeat(40), name: 'Jeton é 中文 🏦', symbol: 'É', decimals: 6, ercType: 'ERC-20' };
  const page = [
    transfer({ value: '5', erc20Token: token, from: { ...addr('a'), name: 'Ünïcødé Treasury 🏦' } }),
    transfer({ logIndex: 4, txHash: '0xtħ', value: '7', erc20Token: { ...token, name: 'tab\there' }, ñame: 'drift' }),
    transfer({ logIndex: 5, value: '-1é', erc20Token: token }),
  ];
  const json = JSON.stringify(page);

  it('land the same bytes, rejects, drift and high-water keys as the same page parsed as text', () => {
    const gates = [new ListingGate(undefined), new ListingGate(undefined)] as const;
    const text = new Transformer(ercTransfers, partition, {}, gates[0]);
    text.push(JSON.parse(json));
    const bytes = new Transformer(ercTransfers, partition, {}, gates[1]);
    bytes.push(JSON.parse(Buffer.from(json, 'utf8').toString('latin1')), true);
    const a = text.take();
    const b = bytes.take();
    expect(b.rows).toBe(2);
    // The byte page's lines are written as latin1 (Spool): the same bytes as the text lines in UTF-8.
    expect(Buffer.from(b.lines.join('\n'), 'latin1').equals(Buffer.from(a.lines.join('\n'), 'utf8'))).toBe(true);
    expect(b.lines.join('')).not.toEqual(a.lines.join(''));
    expect(b.rejects).toEqual(a.rejects);
    expect(b.rejects[0]!.reason).toBe('value: expected a non-negative integer as decimal digits, got "-1é"');
    expect(b.extraFields).toEqual({ ñame: 1 });
    expect(gates[1].getTop()).toEqual(gates[0].getTop());
    expect(gates[1].getTop()!.keys.some((k) => k.includes('0xtħ'))).toBe(true);
  });

  it('come only from raw files of valid UTF-8 without \\u escapes', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { brotliCompressSync } = await import('node:zlib');
    const { readRawPages } = await import('../../src/load/raw.js');
    const dir = mkdtempSync(join(tmpdir(), 'cl-rawbytes-'));
    const file = (name: string, body: Buffer) => {
      writeFileSync(join(dir, name), brotliCompressSync(body));
      return pagesOf(join(dir, name), { bytes: true });
    };
    const pagesOf = async (path: string, o: { bytes?: boolean } = {}) => {
      const out = [];
      for await (const p of readRawPages(path, o)) out.push(p);
      return out;
    };
    const plain = await file('plain', Buffer.from(`{"transfers":[{"name":"é"}]}\n{"transfers":[]}\n`));
    expect(plain.map((p) => p.bytes)).toEqual([true, true]);
    expect((plain[0]!.page as { transfers: Array<{ name: string }> }).transfers[0]!.name).toBe('\xc3\xa9');
    const escaped = await file('escaped', Buffer.from('{"transfers":[{"name":"\\u00e9"}]}\n'));
    expect(escaped[0]!.bytes).toBe(false);
    expect((escaped[0]!.page as { transfers: Array<{ name: string }> }).transfers[0]!.name).toBe('é');
    const invalid = await file('invalid', Buffer.concat([Buffer.from('{"transfers":[{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}\n')]));
    expect(invalid[0]!.bytes).toBe(false);
    expect((await pagesOf(join(dir, 'plain'))).map((p) => p.bytes)).toEqual([false, false]);
  });

  it('are read page by page from a stream: pages longer than its chunks whole, each page parsed as bytes if it allows it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-rawstream-'));
    // Pages of 1 byte to three chunks, so that page ends fall anywhere in the decompressed chunks.
    const pages = [1, 5_000, RAW_CHUNK + 70_000, 3 * RAW_CHUNK, 3, 131_072, RAW_CHUNK].map((n, i) => ({ transfers: [{ name: `${i}é`.padEnd(n, 'x') }] }));
    const lines = pages.map((p) => JSON.stringify(p));
    lines.splice(2, 0, '{"transfers":[{"name":"\\u00e9"}]}');
    writeFileSync(join(dir, 'raw'), brotliCompressSync(Buffer.from(lines.join('\n') + '\n')));
    const read = [];
    for await (const p of readRawPages(join(dir, 'raw'), { bytes: true })) read.push(p);
    expect(read.map((p) => p.bytes)).toEqual([true, true, false, true, true, true, true, true]);
    const names = read.map((p) => {
      const name = (p.page as { transfers: Array<{ name: string }> }).transfers[0]!.name;
      return p.bytes ? fromBytes(name) : name;
    });
    const sent = pages.map((p) => p.transfers[0]!.name);
    sent.splice(2, 0, 'é');
    expect(names).toEqual(sent);
  });
});

describe('schema drift inside nested objects', () => {
  it('counts a field no column reads by its path, inside an object read in part as at the top; objects read whole hold none', () => {
    const t = new Transformer(ercTransfers, partition);
    const token = { address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'TT', decimals: 6, ercType: 'ERC-20', price: { currencyCode: 'usd', value: 1.5, source: 'x' }, newField: 1 };
    t.push([
      transfer({ value: '5', erc20Token: token, from: { ...addr('a'), label: 'exchange' }, extra: 1 }),
      // NFT metadata is a JSON column: whatever it holds is read.
      transfer({ logIndex: 4, erc721Token: { address: '0x' + 'd'.repeat(40), name: 'N', symbol: 'NN', ercType: 'ERC-721', tokenId: '7', tokenUri: 'x', metadata: { anything: { deep: 1 } } } }),
    ]);
    const b = t.take();
    expect(b.rejects).toEqual([]);
    expect(b.rows).toBe(2);
    expect(b.extraFields).toEqual({ extra: 1, 'erc20Token.newField': 1, 'erc20Token.price.source': 1, 'from.label': 1 });
  });

  it('is not counted where no report says it (rebuild), the rows landing as they do with it counted', () => {
    const item = transfer({ value: '5', erc20Token: { address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'TT', decimals: 6, newField: 1 }, extra: 1 });
    const counted = new Transformer(ercTransfers, partition);
    const quiet = new Transformer(ercTransfers, partition, {}, undefined, { drift: false });
    counted.push([item]);
    quiet.push([item]);
    const [a, b] = [counted.take(), quiet.take()];
    expect(a.extraFields).toEqual({ extra: 1, 'erc20Token.newField': 1 });
    expect(b.extraFields).toEqual({});
    expect(b.lines).toEqual(a.lines);
  });
});

describe('rows a listing sends again', () => {
  const erc20 = { address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'T', decimals: 18, ercType: 'ERC-20' };
  const t = (block: number, logIndex: number) => transfer({ blockNumber: String(block), txHash: `0xt${block}`, logIndex, value: '1', erc20Token: erc20 });
  const itx = (extra: Record<string, unknown> = {}) => ({
    blockNumber: '5', blockTimestamp: 1700000000, blockHash: '0xb', txHash: '0xt', from: addr('A'), to: addr('B'),
    internalTxType: 'CALL', value: '1', isReverted: false, gasUsed: '21000', gasLimit: '30000', ...extra,
  });

  it('a row the page before sent again (pages that overlap by one) is dropped and counted', () => {
    const x = new Transformer(ercTransfers, partition);
    expect(x.push([t(103, 0), t(102, 0), t(101, 0)])).toEqual({ fresh: 3, twice: 0, dropped: false });
    expect(x.push([t(101, 0), t(100, 0)])).toEqual({ fresh: 1, twice: 1, dropped: false });
    const b = x.take();
    expect(b.rows).toBe(4);
    expect(b.sentTwice).toBe(1);
    expect(new Set(b.lines).size).toBe(4);
  });

  it('a page with nothing new (a fresh token, the same rows) is dropped whole: batch, rejects, drift, keys and order as before it', () => {
    const gate = new ListingGate(undefined);
    const x = new Transformer(ercTransfers, partition, {}, gate);
    const page = [t(101, 0), t(100, 1), 'junk', { ...t(100, 2), extra: 1 }];
    x.push(page);
    const top = gate.getTop();
    const low = gate.low;
    expect(x.push(structuredClone(page))).toEqual({ fresh: 0, twice: 3, dropped: true });
    expect(gate.getTop()).toEqual(top);
    expect(gate.low).toBe(low);
    const b = x.take();
    expect(b.rows).toBe(3);
    expect(b.rejects).toHaveLength(1);
    expect(b.extraFields).toEqual({ extra: 1 });
    expect(b.sentTwice).toBe(3);
  });

  it('keys are those of the table for any stream, not only block-ranged ones', () => {
    const x = new Transformer(delegators, { id: 'x', path: {}, query: {}, values: { network: 'mainnet' } });
    const d = (tx: string) => ({ txHash: tx, nodeId: 'NodeID-x', rewardAddresses: ['avax1x'], amountDelegated: '1', delegationFee: '1', startTimestamp: 1, endTimestamp: 2, delegationStatus: 'completed', grossReward: '1', netReward: '1' });
    x.push([d('0x1'), d('0x2')]);
    expect(x.push([d('0x2'), d('0x3')])).toEqual({ fresh: 1, twice: 1, dropped: false });
    expect(x.take().rows).toBe(3);
  });

  it('rows outside the block range asked are another listing\'s: dropped and counted; one below it reaches the floor', () => {
    const gate = new ListingGate({ from: 100, to: 200 });
    const x = new Transformer(ercTransfers, partition, {}, gate);
    x.push([t(200, 0), t(199, 0), t(100, 0)]);
    expect(gate.reachedFloor).toBe(false);
    x.push([t(99, 0)]);
    expect(gate.reachedFloor).toBe(true);
    const b = x.take();
    expect(b.rows).toBe(2);
    expect(b.sentTwice).toBe(2);
    expect(gate.getTop()!.block).toBe(199);
  });

  it('internal transactions: twins in one page stay two rows; a page sent again identically does not make new twins', () => {
    const once = new Transformer(internalTransactions, partition);
    once.push([itx(), itx(), itx(), itx({ value: '2' })]);
    const want = rowsOf(once).rows.map((r) => r.internal_tx_id);
    const x = new Transformer(internalTransactions, partition);
    x.push([itx(), itx()]);
    const carry = x.getCarry();
    expect(x.push([itx(), itx()])).toEqual({ fresh: 0, twice: 2, dropped: true });
    expect(x.getCarry()).toEqual(carry);
    // A twin straddling the page boundary still counts as the third sibling.
    x.push([itx(), itx({ value: '2' })]);
    const { b, rows } = rowsOf(x);
    expect(b.sentTwice).toBe(2);
    expect(rows.map((r) => r.internal_tx_id)).toEqual(want);
    expect(new Set(want).size).toBe(4);
  });

  it('a new window or a restarted listing may send the same rows again', () => {
    const x = new Transformer(ercTransfers, partition);
    x.push([t(101, 0)]);
    x.endListing();
    expect(x.push([t(101, 0), t(102, 0)]).dropped).toBe(false);
    x.endListing();
    expect(x.push([t(101, 0)])).toEqual({ fresh: 1, twice: 0, dropped: false });
  });
});

describe('row keys', () => {
  it('every declared stream compiles with its key', async () => {
    const { STREAMS } = await import('../../src/streams/index.js');
    const { compileRows } = await import('../../src/transform/compile.js');
    for (const d of STREAMS) {
      expect(d.key.length, d.table).toBeGreaterThan(0);
      expect(() => compileRows(d, {}), d.table).not.toThrow();
    }
  });
});
