// `chainlake aggregate-signatures` as a child process against the simulator in this process
// (behind a proxy that records every request): the signed message printed, the body sent once with
// the key only in its header, every rule of the spec checked before sending (exit 2, nothing sent),
// and a service that refuses (400) or fails (503) tried once, exit 1.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cb58Encode } from '../../src/ids.js';
import type { Simulator } from '../../src/simulator/server.js';
import { json, keyedSimulator, scriptedServer } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';

const KEY = 'sk-SIG-SENTINEL-91c0';
const PATH = '/v1/signatureAggregator/mainnet/aggregateSignatures';
const MESSAGE = '0000000000059f3be606497285d0ffbb5ac9ba24aa60346a9b1812479ed66cb329f394a4b1c7';
const SUBNET_CB58 = cb58Encode(new Uint8Array(32).fill(7));

describe('aggregate-signatures against the simulator', () => {
  let keyed: Awaited<ReturnType<typeof keyedSimulator>>;
  let sim: Simulator;
  let proxy: typeof keyed.proxy;
  const env = { CHAINLAKE_API_KEY: KEY };
  beforeAll(async () => {
    keyed = await keyedSimulator(KEY);
    ({ sim, proxy } = keyed);
  });
  afterAll(() => keyed.close());

  it('prints the signed message: the message, a signer bitset for the quorum and a 96-byte signature', async () => {
    const before = proxy.requests.length;
    const flags = ['--network', 'mainnet', '--message', `0x${MESSAGE}`, '--quorum-percentage', '50', '--quorum-percentage-buffer', '20', '--p-chain-height', '1155', '--signing-subnet-id', SUBNET_CB58];
    const r = await cliHere(['aggregate-signatures', '--data-url', proxy.url, ...flags], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const signed = r.stdout.trim();
    // message | type 0 | bitset length 2 | 7 of 10 validators (50 + 20 %) | signature
    expect(signed.slice(0, MESSAGE.length)).toBe(MESSAGE);
    expect(signed.slice(MESSAGE.length, MESSAGE.length + 20)).toBe('00000000' + '00000002' + '007f');
    expect(signed.length).toBe(MESSAGE.length + 20 + 192);

    const sent = proxy.requests.slice(before);
    expect(sent.map((q) => [q.method, q.url])).toEqual([['POST', PATH]]);
    expect(JSON.parse(sent[0]!.body)).toEqual({ message: `0x${MESSAGE}`, signingSubnetId: SUBNET_CB58, quorumPercentage: 50, quorumPercentageBuffer: 20, pChainHeight: 1155 });
    expect(sent[0]!.headers['x-data-api-key']).toBe(KEY);
    expect(sent[0]!.url + sent[0]!.body + r.stdout).not.toContain(KEY);

    // The same request signs the same; another quorum signs otherwise.
    expect((await cliHere(['aggregate-signatures', '--data-url', proxy.url, ...flags], env)).stdout.trim()).toBe(signed);
    const other = await cliHere(['aggregate-signatures', '--data-url', proxy.url, '--network', 'mainnet', '--message', MESSAGE], env);
    expect(other.code).toBe(0);
    expect(other.stdout.trim()).not.toBe(signed);
  });

  it('takes a justification alone, and the key from a pipeline under its configured header', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cl-sig-'));
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(pipeline, `name: p\nsources:\n  data: { url: "${proxy.url}", apiKey: "\${SIG_KEY}", keyHeader: x-glacier-api-key }\nstreams:\n  - { table: chains }\n`);
    const before = proxy.requests.length;
    const r = await cliHere(['aggregate-signatures', '--pipeline', pipeline, '--network', 'fuji', '--justification', '0001abcdabcfff'], { SIG_KEY: KEY, CHAINLAKE_API_KEY: '' });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^[0-9a-f]+$/);
    const [q] = proxy.requests.slice(before);
    expect(q!.url).toBe('/v1/signatureAggregator/fuji/aggregateSignatures');
    expect(q!.headers['x-glacier-api-key']).toBe(KEY);
    expect(q!.headers['x-data-api-key']).toBeUndefined();
    expect(JSON.parse(q!.body)).toEqual({ justification: '0001abcdabcfff' });
  });

  it('refuses every broken rule with exit 2 naming the flag, and sends nothing', async () => {
    const cases: Array<[string[], string[]]> = [
      [['--message', '00'], ['--network is required']],
      [['--network', 'devnet', '--message', '00'], ['--network: "devnet" is not one of mainnet, fuji, testnet']],
      [['--network', 'mainnet'], ['give --message HEX or --justification HEX']],
      [['--network', 'mainnet', '--message', '0xabc'], ['--message: "0xabc" is not hex bytes']],
      [['--network', 'mainnet', '--message', 'zz'], ['--message: "zz" is not hex bytes']],
      [['--network', 'mainnet', '--justification', '0x'], ['--justification: "0x" is not hex bytes']],
      [['--network', 'mainnet', '--message', '00', '--message', '11'], ['--message: given 2 times']],
      [['--network', 'mainnet', '--message', '00', '--quorum-percentage', '101'], ['--quorum-percentage: 101 is not an integer from 0 to 100']],
      [['--network', 'mainnet', '--message', '00', '--quorum-percentage', '50.5'], ['--quorum-percentage: "50.5" is not an integer from 0 to 100']],
      [['--network', 'mainnet', '--message', '00', '--quorum-percentage-buffer', 'x'], ['--quorum-percentage-buffer: "x" is not an integer from 0 to 100']],
      [['--network', 'mainnet', '--message', '00', '--quorum-percentage', '60', '--quorum-percentage-buffer', '41'], ['--quorum-percentage-buffer: the quorum 60 plus the buffer 41 is 101, over 100']],
      [['--network', 'mainnet', '--message', '00', '--quorum-percentage-buffer', '34'], ['the quorum 67 (the default) plus the buffer 34 is 101']],
      [['--network', 'mainnet', '--message', '00', '--p-chain-height', '-1'], ['--p-chain-height: "-1" is not a whole number >= 0']],
      [['--network', 'mainnet', '--message', '00', '--p-chain-height', '1e3'], ['--p-chain-height: "1e3" is not a whole number >= 0']],
      [['--network', 'mainnet', '--message', '00', '--signing-subnet-id', '0x1234'], ['--signing-subnet-id: "0x1234" is 4 hex digits, not 64']],
      [['--network', 'mainnet', '--message', '00', '--signing-subnet-id', 'NotCb58lll'], ['--signing-subnet-id: "NotCb58lll" is neither hex']],
      [['--network', 'mainnet', '--message', '00', '--signing-subnet-id', cb58Encode(new Uint8Array(20))], ['encodes 20 bytes, not 32']],
      [['--network', 'mainnet', '--message', '00', '--data-url', 'ftp://x'], ['--data-url "ftp://x": not an http(s) URL']],
      [['--network', 'mainnet', '--message', '00', '--data-url', proxy.url, '--data-url', proxy.url], ['--data-url: given 2 times']],
      [['--network', 'mainnet', '--message', '00', '--data-url', proxy.url, '--pipeline', '/nonexistent/p.yaml'], ['/nonexistent/p.yaml: cannot read the pipeline']],
    ];
    const before = sim.stats.requests;
    const results = await Promise.all(cases.map(([flags]) => cliHere(['aggregate-signatures', ...(flags.includes('--data-url') ? [] : ['--data-url', proxy.url]), ...flags], env)));
    cases.forEach(([flags, messages], i) => {
      expect(results[i]!.code, flags.join(' ')).toBe(2);
      for (const m of messages) expect(results[i]!.stderr, flags.join(' ')).toContain(m);
    });
    // Valid edges pass: 0x-prefixed and bare hex, 100 + 0, hex subnet ids, height 0.
    const edge = await cliHere(['aggregate-signatures', '--data-url', proxy.url, '--network', 'testnet', '--message', 'AbCd', '--quorum-percentage', '100', '--quorum-percentage-buffer', '0', '--signing-subnet-id', '0x' + '11'.repeat(32), '--p-chain-height', '0'], env);
    expect(edge.code).toBe(0);
    expect(sim.stats.requests).toBe(before + 1);
  });

  it('the simulator answers a bad body with 400 and the standard error body', async () => {
    for (const [body, message] of [
      ['{}', 'message: either message or justification is required'],
      ['{"message":"0x0"}', 'message: "0x0" is not hex bytes'],
      ['{"message":"00","quorumPercentage":"50"}', 'quorumPercentage must be a number'],
      ['{"message":"00","quorumPercentage":70,"quorumPercentageBuffer":31}', 'the quorum 70 plus the buffer 31 is 101, over 100'],
      ['nope', 'the body is not valid JSON'],
    ]) {
      const res = await fetch(`${sim.url}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-data-api-key': KEY }, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ message: expect.stringContaining(message!), error: 'Bad Request', statusCode: 400 });
    }
    const res = await fetch(`${sim.url}/v1/signatureAggregator/devnet/aggregateSignatures`, { method: 'POST', headers: { 'x-data-api-key': KEY }, body: '{"message":"00"}' });
    expect(res.status).toBe(400);
  });
});

describe('aggregate-signatures against a failing service', () => {
  it('quotes a 400 and does not retry a 503: exit 1, one request each', async () => {
    for (const [status, body, expected] of [
      [400, { message: 'quorum not reachable', error: 'Bad Request', statusCode: 400 }, 'answered 400: quorum not reachable'],
      [503, { message: 'down', error: 'Service Unavailable', statusCode: 503 }, '503 down'],
    ] as const) {
      const server = await scriptedServer((_req, res) => json(res, status, body));
      try {
        const r = await cliHere(['aggregate-signatures', '--data-url', server.url, '--network', 'mainnet', '--message', '00'], { CHAINLAKE_API_KEY: '' });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(expected);
        expect(server.requests).toHaveLength(1);
      } finally {
        await server.close();
      }
    }
  });

  it('refuses an answer without a hex signedMessage', async () => {
    const server = await scriptedServer((_req, res) => json(res, 201, { signedMessage: 'not hex' }));
    try {
      const r = await cliHere(['aggregate-signatures', '--data-url', server.url, '--network', 'mainnet', '--message', '00'], { CHAINLAKE_API_KEY: '' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the answer has no signedMessage in hex');
    } finally {
      await server.close();
    }
  });
});
