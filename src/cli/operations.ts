// `chainlake export-op start|status` and `chainlake aggregate-signatures` (docs/operations.md "Export
// operations and signatures"). Every flag is checked before anything is sent or written; a bad
// one is exit 2 with a message naming it. The handlers import the pipeline reader, the client and
// the operations when they run: start-up (main.ts).
import type { Argv, CommandModule } from 'yargs';
import { NETWORKS, type Network } from '../ids.js';
import { EVM_EXPORT, EXPORT_TYPES, exportRequestProblems, signatureRequestProblems, type ExportRequest, type SignatureRequest } from '../requests.js';
import { UsageError } from '../errors.js';
import type { ExportContext } from '../operations/exports.js';
import { DEFAULT_MAX_DOWNLOAD_BYTES } from '../operations/links.js';
import type { OperationRow } from '../operations/table.js';
import { textTable } from '../text.js';
import type { Client, SourceConfig } from '../sources/client.js';
import { bounded, inert, LINE_CHARS } from '../text.js';
import { commandOf, checkLake, checkUrl, givenLake, seedOf, type Exit, type Globals } from './args.js';
import { stoppable } from './stoppable.js';

interface SourceArgs {
  pipeline?: unknown;
  dataUrl?: unknown;
  simulator?: boolean;
  seed?: number;
}

function sourceFlags<T>(y: Argv<T>) {
  return y
    .option('pipeline', { type: 'string', requiresArg: true, describe: 'take the data source (url, apiKey, keyHeader, ...) from this pipeline file' })
    .option('data-url', { type: 'string', requiresArg: true, describe: 'data service URL (overrides the pipeline)' })
    .option('simulator', { type: 'boolean', describe: 'start the embedded simulator on a free loopback port and use it' })
    .option('seed', { type: 'number', requiresArg: true, describe: 'simulator seed (with --simulator)' });
}

/**
 * The data source: the pipeline's, else the defaults with the key from CHAINLAKE_API_KEY. Checked
 * before the simulator starts, so a bad flag starts nothing.
 */
async function dataSource(a: SourceArgs): Promise<SourceConfig> {
  const problems: string[] = [];
  const pipeline = oneFlag(a.pipeline);
  const dataUrl = oneFlag(a.dataUrl);
  fail(problems);
  const { DEFAULT_URLS, loadPipeline, SOURCE_DEFAULTS } = await import('../config/pipeline.js');
  const src: SourceConfig = pipeline
    ? loadPipeline(pipeline).sources.data
    : { url: DEFAULT_URLS.data, ...SOURCE_DEFAULTS, ...(process.env.CHAINLAKE_API_KEY ? { apiKey: process.env.CHAINLAKE_API_KEY } : {}) };
  const url = checkUrl('data-url', dataUrl);
  if (url) src.url = url;
  return src;
}

/**
 * Runs `f` with a client of the source, and the embedded simulator around it with --simulator.
 * Call it once every other flag is checked: it is the last check.
 */
async function withClient<T>(a: SourceArgs, f: (client: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
  const src = await dataSource(a);
  const { Client } = await import('../sources/client.js');
  let sim: { url: string; close(): Promise<void> } | undefined;
  if (a.simulator) {
    const { startSimulator } = await import('../simulator/server.js');
    sim = await startSimulator({ port: 0, seed: seedOf(a.seed, 1) });
    if (!a.dataUrl) src.url = sim.url;
  }
  // Stopped mid-request: what was committed stays; say so instead of a stack, and exit as shells
  // report a stop by that signal.
  return stoppable(undefined, 'what was recorded stays in the lake', async (signal) => {
    try {
      return await f(new Client('data', src), signal);
    } finally {
      await sim?.close();
    }
  });
}

function fail(problems: string[]): void {
  if (problems.length) throw new UsageError(problems.join('\n'));
}

/** A comma list (a repeated flag adds to it); undefined when the flag is not given. */
function listFlag(flag: string, v: unknown, problems: string[]): string[] | undefined {
  if (v === undefined) return undefined;
  const items = (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim());
  if (items.some((x) => x === '')) problems.push(`--${flag}: an empty entry in ${JSON.stringify((Array.isArray(v) ? v : [v]).join(','))}`);
  return items.filter((x) => x !== '');
}

/** One value of a flag that takes one (given twice, main.ts's onceEach refused it already). */
function oneFlag(v: unknown): string | undefined {
  return v === undefined ? undefined : String(v);
}

const EXPORT_FLAGS: Record<string, string> = {
  type: '--type',
  firstDate: '--first-date',
  lastDate: '--last-date',
  'options.addresses': '--addresses',
  'options.includeChains': '--include-chains',
  'options.cChainEvmAddresses': '--c-chain-evm-addresses',
};

interface StartArgs extends SourceArgs, Globals {
  type?: unknown;
  firstDate?: unknown;
  lastDate?: unknown;
  addresses?: unknown;
  includeChains?: unknown;
  cChainEvmAddresses?: unknown;
  wait: boolean;
  maxWait?: unknown;
}

export function exportRequestOf(a: StartArgs): ExportRequest {
  const problems: string[] = [];
  const type = oneFlag(a.type) ?? EVM_EXPORT;
  const firstDate = oneFlag(a.firstDate);
  const lastDate = oneFlag(a.lastDate);
  if (firstDate === undefined) problems.push('--first-date is required (YYYY-MM-DD)');
  if (lastDate === undefined) problems.push('--last-date is required (YYYY-MM-DD)');
  const addresses = listFlag('addresses', a.addresses, problems);
  const includeChains = listFlag('include-chains', a.includeChains, problems);
  const cChainEvmAddresses = listFlag('c-chain-evm-addresses', a.cChainEvmAddresses, problems);
  const request: ExportRequest = {
    type,
    ...(firstDate !== undefined ? { firstDate } : {}),
    ...(lastDate !== undefined ? { lastDate } : {}),
    options: { ...(addresses ? { addresses } : {}), ...(includeChains ? { includeChains } : {}), ...(cChainEvmAddresses ? { cChainEvmAddresses } : {}) },
  };
  for (const [field, message] of exportRequestProblems(request)) problems.push(`${EXPORT_FLAGS[field] ?? field}: ${message}`);
  fail(problems);
  return request;
}

function maxWaitMs(v: unknown): number {
  const s = oneFlag(v) ?? '21600';
  const n = Number(s);
  if (!/^\d+(\.\d+)?$/.test(s) || !(n > 0)) throw new UsageError(`--max-wait ${JSON.stringify(s)}: a number of seconds > 0`);
  return n * 1000;
}

function context(lake: string, maxWait: number, client: Client, signal: AbortSignal): ExportContext {
  const links = { service: client.baseUrl, privateLinks: client.source.privateLinks ?? false, maxBytes: client.source.maxDownloadBytes ?? DEFAULT_MAX_DOWNLOAD_BYTES };
  // The lines quote the service: operation ids, statuses, messages.
  return { client, lake, signal, maxWaitMs: maxWait, links, log: (line) => process.stderr.write(`chainlake: ${inert(bounded(line, LINE_CHARS))}\n`) };
}

function printRows(rows: OperationRow[]): void {
  const table = rows.map((r) => [
    r.operation_id,
    r.operation_status,
    r.code ?? '',
    r.first_date && r.last_date ? `${r.first_date}..${r.last_date}` : '',
    r.next_date ?? '',
    r.download_path ?? '',
    r.download_bytes ?? '',
  ].map((cell) => (typeof cell === 'number' ? cell : inert(bounded(cell)))));
  process.stdout.write(textTable(['operation', 'status', 'code', 'dates', 'next date', 'file (in the lake)', 'bytes'], table) + '\n');
}

async function cmdStart(a: StartArgs): Promise<number> {
  const lake = checkLake(givenLake(a));
  const request = exportRequestOf(a);
  const maxWait = maxWaitMs(a.maxWait);
  const { startExport } = await import('../operations/exports.js');
  const rows = await withClient(a, (client, signal) => startExport(context(lake, maxWait, client, signal), request, a.wait));
  printRows(rows);
  if (!a.wait) process.stderr.write(`chainlake: not waiting (--no-wait); \`chainlake export-op status ${inert(bounded(rows[0]!.operation_id))} --wait\` follows it and downloads its file\n`);
  return 0;
}

async function cmdStatus(a: SourceArgs & Globals & { operationId?: unknown; wait?: boolean; maxWait?: unknown }): Promise<number> {
  const lake = checkLake(givenLake(a));
  const problems: string[] = [];
  const id = oneFlag(a.operationId);
  if (id !== undefined && !/^[\x21-\x7e]{1,200}$/.test(id)) problems.push(`operationId ${JSON.stringify(id)}: not an operation id (printable, no spaces)`);
  fail(problems);
  const maxWait = maxWaitMs(a.maxWait);
  const { operationStatus } = await import('../operations/exports.js');
  const row = await withClient(a, (client, signal) => operationStatus(context(lake, maxWait, client, signal), id!, a.wait ?? false));
  printRows([row]);
  return 0;
}

export function exportOpCommand(exit: Exit): CommandModule<Globals> {
  return {
    command: 'export-op',
    describe: 'start a transaction export operation and download what it exports into the lake, or poll one',
    builder: (y) =>
      y
        .command(
          'start',
          'start an export; waits (polling with backoff) until it ends, continues a truncated one, and downloads every part into <lake>/exports/',
          (s) =>
            sourceFlags(s)
              .option('type', { type: 'string', requiresArg: true, describe: `${EXPORT_TYPES.join(', ')} (default ${EVM_EXPORT})` })
              .option('first-date', { type: 'string', requiresArg: true, describe: 'first day, YYYY-MM-DD (required)' })
              .option('last-date', { type: 'string', requiresArg: true, describe: 'last day, YYYY-MM-DD (required)' })
              .option('addresses', { type: 'string', requiresArg: true, describe: 'comma list: EVM addresses (EVM export, required) or P-/X-chain addresses (primary network)' })
              .option('include-chains', { type: 'string', requiresArg: true, describe: 'comma list: EVM chain ids (EVM export), or p-chain, x-chain, c-chain or blockchain ids (primary network); required' })
              .option('c-chain-evm-addresses', { type: 'string', requiresArg: true, describe: 'comma list of EVM addresses (primary-network exports only)' })
              .option('wait', { type: 'boolean', default: true, describe: 'follow the operation to its end (--no-wait: print its id and return)' })
              .option('max-wait', { type: 'string', requiresArg: true, describe: 'seconds to wait for one operation before giving up (default 21600); it keeps running on the service' }),
          async (a) => exit(await cmdStart(a)),
        )
        .command(
          'status <operationId>',
          'poll an operation once (or to its end with --wait), record it in the operations table and download its file when it has one',
          (s) =>
            sourceFlags(s)
              .positional('operationId', { type: 'string', describe: 'the id `export-op start` printed' })
              .option('wait', { type: 'boolean', describe: 'poll until the operation ends' })
              .option('max-wait', { type: 'string', requiresArg: true, describe: 'with --wait: seconds before giving up (default 21600)' }),
          async (a) => exit(await cmdStatus(a)),
        )
        .demandCommand(1, 'give export-op start or export-op status <operationId>'),
    handler: () => undefined,
  };
}

const SIGNATURE_FLAGS: Record<string, string> = {
  message: '--message',
  justification: '--justification',
  signingSubnetId: '--signing-subnet-id',
  quorumPercentage: '--quorum-percentage',
  quorumPercentageBuffer: '--quorum-percentage-buffer',
  pChainHeight: '--p-chain-height',
};

interface SignatureArgs extends SourceArgs {
  network?: unknown;
  message?: unknown;
  justification?: unknown;
  signingSubnetId?: unknown;
  quorumPercentage?: unknown;
  quorumPercentageBuffer?: unknown;
  pChainHeight?: unknown;
}

export function signatureRequestOf(a: SignatureArgs): { network: Network; request: SignatureRequest } {
  const problems: string[] = [];
  const network = oneFlag(a.network);
  if (network === undefined) problems.push(`--network is required (${NETWORKS.join(', ')})`);
  else if (!(NETWORKS as readonly string[]).includes(network)) problems.push(`--network: ${JSON.stringify(network)} is not one of ${NETWORKS.join(', ')}`);
  const text = (f: 'message' | 'justification' | 'signingSubnetId') => oneFlag(a[f]);
  const whole = (f: 'quorumPercentage' | 'quorumPercentageBuffer' | 'pChainHeight', what: string) => {
    const s = oneFlag(a[f]);
    if (s === undefined) return undefined;
    if (/^\d{1,15}$/.test(s)) return Number(s);
    problems.push(`${SIGNATURE_FLAGS[f]}: ${JSON.stringify(s)} is not ${what}`);
    return undefined;
  };
  const message = text('message');
  const justification = text('justification');
  const signingSubnetId = text('signingSubnetId');
  const quorumPercentage = whole('quorumPercentage', 'an integer from 0 to 100');
  const quorumPercentageBuffer = whole('quorumPercentageBuffer', 'an integer from 0 to 100');
  const pChainHeight = whole('pChainHeight', 'a whole number >= 0');
  const request: SignatureRequest = {
    ...(message !== undefined ? { message } : {}),
    ...(justification !== undefined ? { justification } : {}),
    ...(signingSubnetId !== undefined ? { signingSubnetId } : {}),
    ...(quorumPercentage !== undefined ? { quorumPercentage } : {}),
    ...(quorumPercentageBuffer !== undefined ? { quorumPercentageBuffer } : {}),
    ...(pChainHeight !== undefined ? { pChainHeight } : {}),
  };
  for (const [field, m] of signatureRequestProblems(request)) {
    // Without a message the only problem of that field is that neither was given (or one twice).
    if (field === 'message' && message === undefined) {
      if (a.message === undefined && a.justification === undefined) problems.push('give --message HEX or --justification HEX (the service needs either)');
      continue;
    }
    problems.push(`${SIGNATURE_FLAGS[field] ?? field}: ${m}`);
  }
  fail(problems);
  return { network: network as Network, request };
}

async function cmdAggregate(a: SignatureArgs): Promise<number> {
  const { network, request } = signatureRequestOf(a);
  const { aggregateSignatures } = await import('../operations/signatures.js');
  const signed = await withClient(a, (client, signal) => aggregateSignatures(client, network, request, signal));
  process.stdout.write(inert(signed) + '\n');
  return 0;
}

const signatureFlags = (y: Argv<Globals>) =>
  sourceFlags(y)
    .option('network', { type: 'string', requiresArg: true, describe: `${NETWORKS.join(', ')} (required)` })
    .option('message', { type: 'string', requiresArg: true, describe: 'the unsigned warp message, hex (optional 0x); this or --justification' })
    .option('justification', { type: 'string', requiresArg: true, describe: 'justification, hex (optional 0x); this or --message' })
    .option('signing-subnet-id', { type: 'string', requiresArg: true, describe: 'subnet whose validators sign: hex (32 bytes) or cb58 (default: the source chain\'s)' })
    .option('quorum-percentage', { type: 'string', requiresArg: true, describe: 'share of the subnet\'s weight that must sign, 0 to 100 (default 67)' })
    .option('quorum-percentage-buffer', { type: 'string', requiresArg: true, describe: 'extra share to try for, 0 to 100 (default 0); with the quorum at most 100' })
    .option('p-chain-height', { type: 'string', requiresArg: true, describe: 'validators at this P-chain height (default 0: the proposed height)' });

export const aggregateSignaturesCommand = commandOf('aggregate-signatures', "ask the data service's signature aggregator to sign a warp message; prints the signed message (hex)", signatureFlags, cmdAggregate);
