import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, parsePipeline } from '../../src/config/pipeline.js';
import { encodeNodeId, encodePrimaryAddress, nodeIdProblem, primaryAddressProblem } from '../../src/ids.js';
import { UsageError } from '../../src/errors.js';
import { cliHere } from '../lake-fixture.js';

const NODE = encodeNodeId(new Uint8Array(20).fill(7));
const PADDR = encodePrimaryAddress('mainnet', new Uint8Array(20).fill(9), 'P');
const BARE = PADDR.slice(2);
const XADDR = `X-${BARE}`;
const CADDR = `C-${BARE}`;
const C = '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E';

function problems(doc: unknown): string {
  try {
    checkPipeline(doc, 'pipelines/x.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

const base = (streams: unknown[]) => ({ name: 't', streams });

describe('identifiers', () => {
  it('checks NodeID checksums and bech32 networks', () => {
    expect(nodeIdProblem(NODE)).toBeNull();
    const broken = NODE.slice(0, -1) + (NODE.endsWith('1') ? '2' : '1');
    expect(nodeIdProblem(broken)).toMatch(/checksum|base58/);
    expect(nodeIdProblem('NodeID-0OIl')).toMatch(/base58/);
    expect(primaryAddressProblem(PADDR, 'mainnet')).toBeNull();
    expect(primaryAddressProblem(PADDR.slice(2), 'mainnet')).toBeNull();
    expect(primaryAddressProblem(PADDR, 'fuji')).toMatch(/prefix "avax", not "fuji"/);
    expect(primaryAddressProblem(PADDR.slice(0, -1) + 'q', 'mainnet')).toMatch(/bech32/);
  });
});

describe('pipeline config', () => {
  it('accepts the documented keys and fills defaults', () => {
    process.env.CHAINLAKE_TEST_KEY = 'k1';
    const p = checkPipeline(
      {
        name: 'demo',
        sources: { data: { url: 'http://127.0.0.1:8080/', apiKey: '${CHAINLAKE_TEST_KEY}' }, metrics: { url: 'http://127.0.0.1:8080' } },
        streams: [
          { table: 'erc_transfers', chainId: '43114', contracts: [C], startBlock: 1000, endBlock: 2000 },
          { table: 'historical_rewards', network: 'mainnet', nodeIds: [NODE], addresses: [PADDR] },
          { table: 'chain_metrics', chainIds: ['43114', 'total'], metrics: ['txCount', 'gasUsed'], timeInterval: 'day', startTimestamp: 1700000000 },
          { table: 'avg_tps', chainIds: ['43114'] },
        ],
      },
      'p.yaml',
    );
    expect(p.sources.data).toMatchObject({ url: 'http://127.0.0.1:8080', apiKey: 'k1' });
    // No name pinned: the client sends the key under every name the service is known to read.
    expect(p.sources.data.keyHeader).toBeUndefined();
    expect(checkPipeline({ ...base([{ table: 'avg_tps', chainIds: ['1'] }]), sources: { data: { keyHeader: 'X-Glacier-Api-Key' } } }, 'p').sources.data.keyHeader).toBe('x-glacier-api-key');
    expect(p.streams[0]!.contracts).toEqual([C.toLowerCase()]);
    expect(checkPipeline(base([{ table: 'avg_tps', chainIds: ['43114'] }]), 'p').sources.metrics.url).toBe('https://metrics.avax.network');
  });

  it('an unset ${VAR} api key means no key', () => {
    delete process.env.CHAINLAKE_UNSET;
    const p = checkPipeline({ ...base([{ table: 'avg_tps', chainIds: ['1'] }]), sources: { data: { apiKey: '${CHAINLAKE_UNSET}' } } }, 'p');
    expect(p.sources.data.apiKey).toBeUndefined();
  });

  it('names the place of every problem', () => {
    const msg = problems(
      base([
        { table: 'erc_transfers', chainId: '43114', contracts: ['0x12'] },
        { table: 'nope' },
        { table: 'historical_rewards', network: 'mainnet' },
        { table: 'chain_metrics', chainIds: ['43114'], metrics: ['avgTps'], timeInterval: 'hour' },
        { table: 'erc_transfers', chainId: '43114', contracts: [C], startBlock: 5, endBlock: 5, extra: 1 },
        { table: 'delegators', network: 'moon', nodeIds: [] },
        { table: 'pending_rewards', network: 'fuji', addresses: [PADDR] },
        { table: 'internal_transactions', chainId: '43114', addresses: [C], pageSize: 101 },
      ]),
    );
    const lines = msg.split('\n');
    expect(lines).toContain('pipelines/x.yaml: streams[0].contracts[0]: "0x12" is not an EVM address (0x + 40 hex digits)');
    expect(msg).toContain('pipelines/x.yaml: streams[1].table: "nope" is not a table');
    expect(msg).toContain('streams[2].addresses: one of addresses and nodeIds is required');
    expect(msg).toContain('streams[3].metrics[0]: metric avgTps accepts only timeInterval day, not hour');
    expect(msg).toContain('streams[4].extra: unknown key for erc_transfers');
    expect(msg).toContain('streams[5].network: "moon" is not a network');
    expect(msg).toContain('streams[5].nodeIds: must not be empty');
    expect(msg).toContain(`streams[6].addresses[0]: "${PADDR}" is not a fuji P-/X-chain address`);
    expect(msg).toContain('streams[7].pageSize: 101 is out of bounds for /v1/chains/{chainId}/addresses/{address}/transactions:listInternals (1 to 100)');
    expect(problems(base([{ table: 'erc_transfers', chainId: '43114', contracts: [C], startBlock: 5, endBlock: 5 }]))).toContain(
      'streams[0].endBlock: startBlock 5 must be below endBlock 5',
    );
  });

  it('rejects wrong types, missing keys, unknown top-level keys and bad urls', () => {
    expect(problems({ name: 't', streams: [], extra: 1 })).toMatch(/extra: unknown key[\s\S]*streams: must be a non-empty list/);
    expect(problems(base([{ table: 'erc_transfers', contracts: 'x' }]))).toMatch(/contracts: must be a list[\s\S]*chainId: is required/);
    expect(problems({ ...base([{ table: 'avg_tps', chainIds: ['1'] }]), sources: { data: { url: 'ftp://x' } } })).toContain('sources.data.url: "ftp://x" is not an http(s) URL');
  });

  it('reports invalid YAML with its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-'));
    const f = join(dir, 'bad.yaml');
    writeFileSync(f, 'name: x\nstreams:\n  - table: [unclosed\n');
    expect(() => loadPipeline(f)).toThrow(/bad\.yaml:\d+:\d+: invalid YAML/);
    expect(() => loadPipeline(join(dir, 'missing.yaml'))).toThrow(/cannot read the pipeline: ENOENT/);
  });
});

describe('identifiers as strict as the services that take them', () => {
  const one = (entry: Record<string, unknown>) => problems(base([entry]));
  const accepted = (entry: Record<string, unknown>) => checkPipeline(base([entry]), 'p').streams[0]!;
  const DATA_ADDRESS = 'is not a mainnet P-/X-chain address (bech32): it has the chain prefix "C-" (only P-, X- or none here)';

  it.each([
    [{ table: 'historical_rewards', network: 'mainnet', addresses: [PADDR, CADDR] }, `streams[0].addresses[1]: "${CADDR}" ${DATA_ADDRESS}`],
    [{ table: 'pending_rewards', network: 'mainnet', addresses: [CADDR] }, `streams[0].addresses[0]: "${CADDR}" ${DATA_ADDRESS}`],
    [{ table: 'delegators', network: 'mainnet', rewardAddresses: [CADDR] }, `streams[0].rewardAddresses[0]: "${CADDR}" ${DATA_ADDRESS}`],
    [{ table: 'address_chains', network: 'mainnet', addresses: [CADDR] }, `streams[0].addresses[0]: "${CADDR}" ${DATA_ADDRESS}`],
    [{ table: 'historical_rewards', network: 'mainnet', addresses: [`Q-${BARE}`] }, `streams[0].addresses[0]: "Q-${BARE}" is not a mainnet P-/X-chain address (bech32): it has the chain prefix "Q-" (only P-, X- or none here)`],
    [{ table: 'utxos', addresses: [PADDR] }, `streams[0].addresses[0]: "${PADDR}" is not an X-chain address (X- and bech32): it has the chain prefix "P-" (only X- here)`],
    [{ table: 'utxos', addresses: [XADDR, BARE] }, `streams[0].addresses[1]: "${BARE}" is not an X-chain address (X- and bech32): it has no chain prefix (only X- here)`],
    [{ table: 'fee_config', blockchainIds: ['C'], block: '12345' }, 'streams[0].block: "12345" is a decimal number: the node takes a block number in hex'],
    [{ table: 'fee_config', blockchainIds: ['C'], block: 12345 }, 'streams[0].block: 12345 is a decimal number: the node takes a block number in hex (12345 is "0x3039")'],
    [{ table: 'fee_config', blockchainIds: ['C'], block: '0x03039' }, 'streams[0].block: "0x03039" has a leading zero, which the node refuses in a hex number'],
    [{ table: 'fee_config', blockchainIds: ['C'], block: '0x8000000000000000' }, 'streams[0].block: "0x8000000000000000" is above 2^63 - 1, the highest block number the node takes'],
    [{ table: 'fee_config', blockchainIds: ['C'], block: 'newest' }, 'streams[0].block: "newest" is not a hex block number (0x...), a block hash (0x and 64 hex digits) or one of latest, earliest, pending, accepted, finalized, safe'],
  ])('%j is refused, naming the place', (entry, message) => {
    const lines = one(entry).split('\n');
    expect(lines).toEqual([`pipelines/x.yaml: ${message}`]);
  });

  it('takes the forms the services take', () => {
    expect(accepted({ table: 'historical_rewards', network: 'mainnet', addresses: [PADDR, encodePrimaryAddress('mainnet', new Uint8Array(20).fill(3), 'X')] }).addresses).toHaveLength(2);
    expect(accepted({ table: 'pending_rewards', network: 'mainnet', addresses: [BARE] }).addresses).toEqual([BARE]);
    expect(accepted({ table: 'delegators', network: 'mainnet', rewardAddresses: [XADDR] }).rewardAddresses).toEqual([XADDR]);
    expect(accepted({ table: 'address_chains', network: 'mainnet', addresses: [PADDR] }).addresses).toEqual([PADDR]);
    expect(accepted({ table: 'utxos', addresses: [XADDR] }).addresses).toEqual([XADDR]);
    for (const block of ['0x0', '0x3039', `0x${'ab'.repeat(32)}`, 'latest', 'accepted', '0x7fffffffffffffff']) expect(accepted({ table: 'fee_config', blockchainIds: ['C'], block }).block).toBe(block);
  });

  it('a bad value ends the command with exit 2, the file and the place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-'));
    const f = join(dir, 'c.yaml');
    writeFileSync(f, `name: x\nstreams:\n  - { table: pending_rewards, network: mainnet, addresses: ["${CADDR}"] }\n`);
    const r = await cliHere(['run', f, '--dry-run', '--lake', join(dir, 'lake')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f}: streams[0].addresses[0]: "${CADDR}" ${DATA_ADDRESS}`);
    expect(existsSync(join(dir, 'lake'))).toBe(false);
  });
});

describe('times in Unix seconds', () => {
  const metrics = (t: Record<string, unknown>) => ({ table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount'], ...t });

  it.each([
    [{ startTimestamp: 1761955200000 }, 'streams[0].startTimestamp: 1761955200000 is not Unix seconds: as milliseconds it is 2025-11-01T00:00:00Z; give 1761955200'],
    [{ endTimestamp: 1761955200000000 }, 'streams[0].endTimestamp: 1761955200000000 is not Unix seconds: as microseconds it is 2025-11-01T00:00:00Z; give 1761955200'],
    [{ startTimestamp: 1761955200000000000 }, 'streams[0].startTimestamp: 1761955200000000000 is not Unix seconds: as nanoseconds it is 2025-11-01T00:00:00Z; give 1761955200'],
    [{ startTimestamp: 1761955200123 }, 'streams[0].startTimestamp: 1761955200123 is not Unix seconds: as milliseconds it is 2025-11-01T00:00:00.123Z; give 1761955200'],
    [{ startTimestamp: 1230767999 }, 'streams[0].startTimestamp: 1230767999 is not Unix seconds from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): it is 2008-12-31T23:59:59Z, before any chain here'],
    [{ startTimestamp: 0 }, 'streams[0].startTimestamp: 0 is not Unix seconds from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): it is 1970-01-01T00:00:00Z, before any chain here'],
    [{ endTimestamp: 4102444801 }, 'streams[0].endTimestamp: 4102444801 is not Unix seconds from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): it is 2100-01-01T00:00:01Z, after 2100-01-01'],
    [{ endTimestamp: 99999999999 }, 'streams[0].endTimestamp: 99999999999 is not Unix seconds from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): it is 5138-11-16T09:46:39Z, after 2100-01-01'],
    [{ startTimestamp: 1761955200.5 }, 'streams[0].startTimestamp: must be a date (2025-10-01), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds (2009-01-01 is 1230768000), not 1761955200.5'],
    [{ startTimestamp: true }, 'streams[0].startTimestamp: must be a date (2025-10-01), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds (2009-01-01 is 1230768000), not true'],
    [{ startTimestamp: '1761955200000' }, 'streams[0].startTimestamp: 1761955200000 is not Unix seconds: as milliseconds it is 2025-11-01T00:00:00Z; give 1761955200'],
    [{ startTimestamp: 'yesterday' }, 'streams[0].startTimestamp: "yesterday" is not a time: give a date (2025-10-01, UTC midnight), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds'],
    [{ startTimestamp: '10/01/2025' }, 'streams[0].startTimestamp: "10/01/2025" is not a time: give a date (2025-10-01, UTC midnight), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds'],
    [{ startTimestamp: '2025-02-30' }, 'streams[0].startTimestamp: "2025-02-30" is not a date and time of the calendar'],
    [{ endTimestamp: '2025-10-01T24:00:00Z' }, 'streams[0].endTimestamp: "2025-10-01T24:00:00Z" is not a date and time of the calendar'],
    [{ startTimestamp: '2025-10-01T12:00:00' }, 'streams[0].startTimestamp: "2025-10-01T12:00:00" has no time zone: give it in UTC, ending in Z (2025-10-01T12:00:00Z)'],
    [{ startTimestamp: '2025-10-01T12:00:00+02:00' }, 'streams[0].startTimestamp: "2025-10-01T12:00:00+02:00" is not in UTC: give it ending in Z (2025-10-01T10:00:00Z)'],
    [{ startTimestamp: '2025-10-01T12:00:00.250Z' }, 'streams[0].startTimestamp: "2025-10-01T12:00:00.250Z" is not a whole second: give 2025-10-01T12:00:00Z'],
    [{ startTimestamp: '2008-12-31' }, 'streams[0].startTimestamp: "2008-12-31" is not a time from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): before any chain here'],
    [{ endTimestamp: '2100-01-01T00:00:01Z' }, 'streams[0].endTimestamp: "2100-01-01T00:00:01Z" is not a time from 2009-01-01 to 2100-01-01 (1230768000 to 4102444800): after 2100-01-01'],
  ])('%j is refused, saying what was probably meant', (t, message) => {
    expect(problems(base([metrics(t)])).split('\n')).toEqual([`pipelines/x.yaml: ${message}`]);
  });

  it('every key documented as Unix seconds is of the kind, in every table', async () => {
    const { STREAMS } = await import('../../src/streams/index.js');
    const keys = STREAMS.flatMap((d) => Object.entries(d.options).filter(([k]) => /timestamp$/i.test(k)).map(([k, o]) => `${d.table}.${k}: ${o.kind}`));
    expect(keys.length).toBeGreaterThan(10);
    expect(keys.filter((k) => !k.endsWith(': unix_seconds'))).toEqual([]);
    const bad = (d: (typeof STREAMS)[number], k: string) => STREAMS.length && problems({ name: 't', sources: { data: { apiKey: 'k' } }, streams: [{ table: d.table, [k]: 1761955200000 }] });
    for (const d of STREAMS) for (const k of Object.keys(d.options).filter((x) => /timestamp$/i.test(x))) expect(bad(d, k)).toContain(`streams[0].${k}: 1761955200000 is not Unix seconds: as milliseconds it is 2025-11-01T00:00:00Z; give 1761955200`);
  });

  it('a date is UTC midnight, a date-time in UTC its second, digits as text (from ${VAR}) seconds', () => {
    const taken = (t: unknown) => checkPipeline(base([metrics({ startTimestamp: t })]), 'p').streams[0]!.startTimestamp;
    expect(taken('2025-10-01')).toBe(1759276800);
    expect(taken('2025-10-01T12:00:00Z')).toBe(1759276800 + 43_200);
    expect(taken('2025-10-01T12:00Z')).toBe(1759276800 + 43_200);
    expect(taken('2025-10-01T12:00:05.000Z')).toBe(1759276800 + 43_205);
    expect(taken('2024-02-29')).toBe(Date.UTC(2024, 1, 29) / 1000);
    expect(taken('1759276800')).toBe(1759276800);
    expect(taken(1759276800)).toBe(1759276800);
    expect(taken('2009-01-01')).toBe(1230768000);
    expect(taken('2100-01-01T00:00:00Z')).toBe(4102444800);
    // A YAML 1.1 document reads an unquoted date as a timestamp: the same second.
    const yaml11 = parsePipeline('%YAML 1.1\n---\nname: t\nstreams:\n  - { table: chain_metrics, chainIds: ["43114"], metrics: [txCount], startTimestamp: 2025-10-01 }\n', 'p');
    expect(yaml11.streams[0]!.startTimestamp).toBe(1759276800);
  });

  it('a block-ranged table takes a time on either side instead of a block, not both on one side', () => {
    const transfers = (t: Record<string, unknown>) => ({ table: 'erc_transfers', chainId: '43114', contracts: ['0xb10644cea485f69a5f8859e127911157a0d6d30d'], ...t });
    const cfg = checkPipeline(base([transfers({ startTimestamp: '2025-10-01', endTimestamp: '2025-11-01T00:00:00Z' })]), 'p').streams[0]!;
    expect([cfg.startTimestamp, cfg.endTimestamp]).toEqual([1759276800, 1761955200]);
    expect(checkPipeline(base([transfers({ startBlock: 5, endTimestamp: '2025-11-01' })]), 'p').streams[0]!).toMatchObject({ startBlock: 5, endTimestamp: 1761955200 });
    expect(problems(base([transfers({ startBlock: 5, startTimestamp: '2025-10-01' })]))).toBe('pipelines/x.yaml: streams[0].startTimestamp: give startBlock or startTimestamp, not both');
    expect(problems(base([transfers({ endBlock: 5, endTimestamp: '2025-10-01' })]))).toBe('pipelines/x.yaml: streams[0].endTimestamp: give endBlock or endTimestamp, not both');
    expect(problems(base([transfers({ startTimestamp: '2025-11-01', endTimestamp: '2025-10-01' })]))).toBe('pipelines/x.yaml: streams[0].endTimestamp: startTimestamp 2025-11-01T00:00:00Z must be before endTimestamp 2025-10-01T00:00:00Z (the end is excluded)');
    // Every block-ranged table of the data service takes them; blocks need a start, of either kind.
    for (const table of ['internal_transactions', 'address_transactions', 'address_token_transfers', 'address_tx_transfers', 'address_tx_internals'])
      expect(checkPipeline(base([{ table, chainId: '43114', addresses: ['0xb10644cea485f69a5f8859e127911157a0d6d30d'], startTimestamp: '2025-10-01' }]), 'p').streams[0]!.startTimestamp).toBe(1759276800);
    for (const table of ['blocks', 'block_transactions']) {
      expect(checkPipeline(base([{ table, chainId: '43114', startTimestamp: '2025-10-01' }]), 'p').streams[0]!.startTimestamp).toBe(1759276800);
      expect(problems(base([{ table, chainId: '43114' }]))).toBe(`pipelines/x.yaml: streams[0].startBlock: is required for ${table} (or startTimestamp)`);
    }
  });

  it('the edges of the range are taken, a second past either is not', () => {
    for (const t of [1230768000, 1761955200, 4102444800]) {
      expect(checkPipeline(base([metrics({ startTimestamp: t })]), 'p').streams[0]!.startTimestamp).toBe(t);
      expect(checkPipeline(base([metrics({ endTimestamp: t })]), 'p').streams[0]!.endTimestamp).toBe(t);
    }
    for (const t of [1230768000 - 1, 4102444800 + 1]) expect(problems(base([metrics({ startTimestamp: t })]))).toContain(`streams[0].startTimestamp: ${t} is not Unix seconds`);
  });

  it.each([
    ['a time in milliseconds', '{ table: chain_metrics, chainIds: ["43114"], metrics: [txCount], startTimestamp: 1761955200000 }', 'streams[0].startTimestamp: 1761955200000 is not Unix seconds: as milliseconds it is 2025-11-01T00:00:00Z; give 1761955200'],
    ['a date that is none', '{ table: erc_transfers, chainId: "43114", contracts: ["0xb10644cea485f69a5f8859e127911157a0d6d30d"], startTimestamp: 2025-13-01 }', 'streams[0].startTimestamp: "2025-13-01" is not a date and time of the calendar'],
  ])('run --dry-run with %s: exit 2 naming the file and the place, nothing written', async (_, entry, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-'));
    const f = join(dir, 'times.yaml');
    writeFileSync(f, `name: times\nstreams:\n  - ${entry}\n`);
    const r = await cliHere(['run', f, '--dry-run', '--simulator', '--lake', join(dir, 'lake')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f}: ${message}`);
    expect(r.stdout).toBe('');
    expect(existsSync(join(dir, 'lake'))).toBe(false);
  });
});

describe('the pipeline lake', () => {
  it('`lake:` is where run lands when --lake is not given; --lake wins; a bad one exits 2', async () => {
    const { mkdtempSync, writeFileSync, existsSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cl-pipeline-lake-'));
    const yaml = join(dir, 'p.yaml');
    writeFileSync(yaml, `name: p\nlake: "\${PIPE_LAKE_DIR}/from-pipeline"\nstreams:\n  - table: chains\n`);
    const env = { PIPE_LAKE_DIR: dir };
    expect((await cliHere(['run', yaml, '--simulator', '--no-warehouse', '--quiet'], env)).code).toBe(0);
    expect(existsSync(join(dir, 'from-pipeline', '_state', 'chains'))).toBe(true);
    expect((await cliHere(['run', yaml, '--simulator', '--no-warehouse', '--quiet', '--lake', join(dir, 'given')], env)).code).toBe(0);
    expect(existsSync(join(dir, 'given', '_state', 'chains'))).toBe(true);
    writeFileSync(yaml, `name: p\nlake: 12\nstreams:\n  - table: chains\n`);
    const bad = await cliHere(['run', yaml, '--simulator', '--quiet'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('lake: 12 must be a lake folder or an s3://bucket/prefix URL');
  });
});
