// Prices are JSON numbers (Money.value in the data service's OpenAPI; docs/services.md, Data
// service): the tables that land them keep the text as sent, digits past a double's 17 and forms
// String() would change included, in a run and in a rebuild from the raw pages. Only those
// streams (and the node's) parse exactly; the others keep JSON.parse.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { startSimulator } from '../../src/simulator/server.js';
import { DUST_PRICE } from '../../src/simulator/balances.js';
import { DEMO } from '../../src/simulator/world.js';
import { STREAMS } from '../../src/streams/index.js';
import { lakeRows as rows, line, quiet, scriptedServer, sorted, answerHead } from '../helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-prices-'));

describe('prices kept as sent', () => {
  it('erc20_balances: a price of 24 significant digits lands whole, in a run and in a rebuild', async () => {
    const sim = await startSimulator({ seed: 12 });
    try {
      const holders = [...new Set([...DEMO.internalAddresses, ...sim.world.internalAddressesOf('43114').slice(0, 6)])];
      const p = checkPipeline({ name: 'p', sources: { data: { url: sim.url } }, streams: [{ table: 'erc20_balances', chainId: '43114', addresses: holders, currency: 'usd' }] }, 'p.yaml');
      const lake = tmp();
      expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
      const head = sim.world.headBlock('43114');
      const want = holders.flatMap((a) => sim.world.erc20Balances('43114', a, { block: head, currency: 'usd' }).map((b) => line(a.toLowerCase(), b.symbol, b.price?.value, b.balanceValue?.value)));
      const got = async () => (await rows(lake, `SELECT address, token_symbol, price_value, balance_value FROM erc20_balances`)).map((r) => line(r.address, r.token_symbol, r.price_value, r.balance_value));
      expect(sorted(await got())).toEqual(sorted(want));
      const dust = await rows(lake, `SELECT DISTINCT price_value FROM erc20_balances WHERE token_symbol = 'DUST'`);
      // The holders hold the dust token (four in five hold each token): its price as sent, not 1.2345678901234568e-7.
      expect(dust).toEqual([{ price_value: DUST_PRICE }]);
      const r = await rebuildTable(lake, 'erc20_balances', { logger: quiet });
      expect(r.rejects).toBe(0);
      expect(sorted(await got())).toEqual(sorted(want));
    } finally {
      await sim.close();
    }
  });

  it('erc_transfers: each token price as the text of its JSON number', async () => {
    const token = (value: unknown) => ({ address: '0x' + 'c'.repeat(40), name: 'T', symbol: 'T', decimals: 6, ercType: 'ERC-20', price: { currencyCode: 'usd', value } });
    const transfer = (logIndex: number, value: unknown) => ({
      blockNumber: '100', blockTimestamp: 1700000000, blockHash: '0xbh', txHash: `0xt${logIndex}`, logIndex, value: '5',
      from: { address: '0x' + 'a'.repeat(40) }, to: { address: '0x' + 'b'.repeat(40) }, erc20Token: token(value),
    });
    const prices = ['0.00000012', '27.41', '0.000000123456789012345678', '1.0', '12345678901234567890.5', '"0.5"'];
    const server = await scriptedServer((req, res) => {
      if (answerHead(req, res, 1000)) return;
      // Written by hand: the numbers exactly as a service would put them on the wire.
      const items = prices.map((p, i) => JSON.stringify(transfer(i, 0)).replace('"value":0}', `"value":${p}}`));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"transfers":[${items.join(',')}]}`);
    });
    try {
      const p = checkPipeline({ name: 'p', sources: { data: { url: server.url } }, streams: [{ table: 'erc_transfers', chainId: '43114', contracts: ['0x' + 'c'.repeat(40)], chunks: 1 }] }, 'p.yaml');
      const lake = tmp();
      const r = await runPipeline(p, { lake, logger: quiet });
      expect(r.status).toBe('ok');
      expect(r.streams[0]!.rejects).toBe(0);
      const got = (await rows(lake, `SELECT log_index, token_price FROM erc_transfers ORDER BY log_index`)).map((x) => x.token_price);
      expect(got).toEqual(['0.00000012', '27.41', '0.000000123456789012345678', '1.0', '12345678901234567890.5', '0.5']);
    } finally {
      await server.close();
    }
  });

  it('are parsed exactly by the streams that land them and by the node\'s; the others keep JSON.parse', () => {
    const exact = STREAMS.filter((d) => d.exactNumbers).map((d) => d.table);
    const node = STREAMS.filter((d) => d.service === 'node').map((d) => d.table);
    // Prices (of tokens, rewards and ICM fees); uint64 JSON numbers (the supply, L1 weights,
    // balances and fees, primary-network amounts, fees and locktimes, staking weights, the
    // network's staking totals, chain metrics: feesPaid in wei).
    const priced = ['erc_transfers', 'historical_rewards', 'native_balances', 'erc20_balances', 'icm_messages', 'address_token_transfers', 'address_tx_transfers'];
    const uint64 = [
      'avax_supply', 'l1_validators', 'platform_transactions', 'platform_inputs', 'platform_outputs', 'platform_blocks', 'platform_utxos',
      'staking_metrics', 'l1_validator_metrics', 'chain_metrics', 'staking_transactions', 'node_blocks',
      'xchain_transactions', 'xchain_inputs', 'xchain_outputs', 'cchain_atomic_transactions', 'cchain_atomic_utxos',
      'network_details', 'xchain_asset_transactions', 'xchain_blocks', 'xchain_utxos', 'cchain_blocks', 'cchain_utxos',
    ];
    expect(sorted(exact)).toEqual(sorted([...priced, ...uint64, ...node]));
    // Every landed price comes from one of them.
    const landed = STREAMS.filter((d) => d.columns.some((c) => (Array.isArray(c.from) ? c.from : [c.from ?? '']).some((f) => /(^|\.)(price|historicalPrice|balanceValue)\.value$/.test(f)))).map((d) => d.table);
    expect(sorted(landed)).toEqual(sorted(priced));
  });
});
