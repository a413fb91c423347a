// Export operations (docs/services.md, Export operations and signatures): a POST starts an
// operation that runs for a while on the server clock, then ends COMPLETED, COMPLETED_WITH_WARNING
// (WarnTruncatedExport with nextDate when the range is longer than one export holds) or FAILED
// (ErrInvalidRequest). Outcomes follow from the request alone. The exported file is served by a
// second loopback server, as production hands out links to a file store on another host: a
// client that sent its API key there would leak it, and `downloads` records what arrived.
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { EVM_EXPORT, EXPORT_TYPES, dateOfDay, dayOf, exportRequestProblems, type ExportRequest } from '../requests.js';
import { badRequest, notFound } from './errors.js';
import { Rng, id32 } from './hash.js';
import type { World } from './world.js';

/** Days one export holds; a longer range is truncated and continues from nextDate. */
export const MAX_EXPORT_DAYS = 31;
/** How long a download link stays valid (server clock). */
const LINK_TTL_MS = 3_600_000;

/** How long an operation runs: a failed request is refused early, an export takes longer per day. */
function runMs(days: number, failed: boolean): number {
  return failed ? 200 : 300 + 20 * days;
}

type Status = 'COMPLETED' | 'COMPLETED_WITH_WARNING' | 'FAILED';

interface Operation {
  id: string;
  type: string;
  createdAt: number;
  doneAt: number;
  status: Status;
  code?: string;
  message: string;
  nextDate?: string;
  file?: { name: string; bytes: Buffer };
}

export interface DownloadRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

/** The body's shape (types of fields): a body that does not parse as a request is a 400. */
function parseRequest(body: unknown): ExportRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.type !== 'string' || !(EXPORT_TYPES as readonly string[]).includes(b.type)) throw badRequest(`type must be one of: ${EXPORT_TYPES.join(', ')}`);
  for (const f of ['firstDate', 'lastDate', 'startDate', 'endDate']) if (b[f] !== undefined && typeof b[f] !== 'string') throw badRequest(`${f} must be a string`);
  if (!b.options || typeof b.options !== 'object' || Array.isArray(b.options)) throw badRequest('options must be an object');
  const o = b.options as Record<string, unknown>;
  for (const f of ['addresses', 'includeChains', 'cChainEvmAddresses']) if (o[f] !== undefined && !isStringList(o[f])) throw badRequest(`options.${f} must be an array of strings`);
  // startDate and endDate are the deprecated names of the same dates.
  const firstDate = (b.firstDate ?? b.startDate) as string | undefined;
  const lastDate = (b.lastDate ?? b.endDate) as string | undefined;
  return { type: b.type, ...(firstDate !== undefined ? { firstDate } : {}), ...(lastDate !== undefined ? { lastDate } : {}), options: o as ExportRequest['options'] };
}

export class SimOperations {
  private readonly ops = new Map<string, Operation>();
  private count = 0;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  private linkBase = '';
  /** Every request the file server got, as it arrived. */
  readonly downloads: DownloadRequest[] = [];

  constructor(
    private readonly world: World,
    private readonly now: () => number,
  ) {}

  /** Starts the file server on a free loopback port. */
  async listen(host: string): Promise<void> {
    this.server = http.createServer((req, res) => this.serveFile(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    const a = this.server.address() as AddressInfo;
    this.linkBase = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  /** POST /v1/operations/transactions:export */
  start(body: unknown): unknown {
    const request = parseRequest(body);
    const n = this.count++;
    const createdAt = this.now();
    // UUID-shaped, as the OpenAPI's example. The clock is part of it so that simulators started one
    // after the other (`--simulator` on each command) do not hand out the same ids to one lake.
    const hex = createHash('sha256').update(`chainlake-sim:${this.world.seed}:operation:${n}:${createdAt}`).digest('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    const op = this.outcome(id, request, createdAt);
    this.ops.set(id, op);
    return this.resource(op);
  }

  /** GET /v1/operations/{operationId} */
  get(id: string): unknown {
    const op = this.ops.get(id);
    if (!op) throw notFound(`operation ${id} not found`);
    return this.resource(op);
  }

  private outcome(id: string, r: ExportRequest, createdAt: number): Operation {
    const fail = (message: string): Operation => ({ id, type: r.type, createdAt, doneAt: createdAt + runMs(0, true), status: 'FAILED', code: 'ErrInvalidRequest', message });
    const problems = exportRequestProblems(r);
    if (r.firstDate === undefined) problems.push(['firstDate', 'is required']);
    if (r.lastDate === undefined) problems.push(['lastDate', 'is required']);
    if (problems.length) return fail(problems.map(([f, m]) => `${f}: ${m}`).join('; '));
    const first = dayOf(r.firstDate!) as number;
    const last = dayOf(r.lastDate!) as number;
    const today = Math.floor(this.world.now / 86_400);
    if (last > today) return fail(`lastDate: ${r.lastDate} is after today (${dateOfDay(today)})`);
    if (r.type === EVM_EXPORT) for (const c of r.options.includeChains!) if (!this.world.chain(c)) return fail(`options.includeChains: chain ${c} is not supported`);
    const end = Math.min(last, first + MAX_EXPORT_DAYS - 1);
    const days = end - first + 1;
    const name = `transactions-${r.firstDate}-${dateOfDay(end)}.csv.gz`;
    const file = { name, bytes: gzipSync(exportCsv(this.world.seed, r, first, end)) };
    const doneAt = createdAt + runMs(days, false);
    if (end < last) {
      const nextDate = dateOfDay(end + 1);
      return { id, type: r.type, createdAt, doneAt, status: 'COMPLETED_WITH_WARNING', code: 'WarnTruncatedExport', message: `The export holds ${MAX_EXPORT_DAYS} days at most; continue from ${nextDate}`, nextDate, file };
    }
    return { id, type: r.type, createdAt, doneAt, status: 'COMPLETED', message: 'Export completed', file };
  }

  /** The operation as it stands on the server clock: RUNNING until its time is up. */
  private resource(op: Operation): unknown {
    const t = this.now();
    const base = { operationId: op.id, operationType: op.type, createdAtTimestamp: Math.floor(op.createdAt / 1000) };
    if (t < op.doneAt) return { ...base, operationStatus: 'RUNNING', message: 'Export in progress', metadata: {}, updatedAtTimestamp: Math.floor(op.createdAt / 1000) };
    const metadata: Record<string, string> = {};
    if (op.code) metadata.code = op.code;
    if (op.nextDate) metadata.nextDate = op.nextDate;
    if (op.file) metadata.downloadUrl = this.link(op, t);
    return { ...base, operationStatus: op.status, message: op.message, metadata, updatedAtTimestamp: Math.floor(op.doneAt / 1000) };
  }

  private sign(path: string, expires: number): string {
    return createHmac('sha256', `chainlake-sim:${this.world.seed}`).update(`${path}\n${expires}`).digest('hex');
  }

  /** A signed link that expires, the way a file store hands one out. */
  private link(op: Operation, t: number): string {
    const path = `/exports/${op.id}/${op.file!.name}`;
    const expires = Math.floor((t + LINK_TTL_MS) / 1000);
    return `${this.linkBase}${path}?expires=${expires}&signature=${this.sign(path, expires)}`;
  }

  private serveFile(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.downloads.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://files.invalid');
    const m = /^\/exports\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const op = m ? this.ops.get(m[1]!) : undefined;
    const expires = Number(url.searchParams.get('expires'));
    const refuse = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(text);
    };
    if (req.method !== 'GET' || !op?.file || m![2] !== op.file.name) return refuse(404, 'no such file');
    if (url.searchParams.get('signature') !== this.sign(url.pathname, expires)) return refuse(403, 'bad signature');
    if (this.now() > expires * 1000) return refuse(403, 'the link has expired');
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(op.file.bytes.length) });
    res.end(op.file.bytes);
  }
}

/** The exported transactions: a few per address, chain and day, each a pure function of them. */
function exportCsv(seed: number, r: ExportRequest, first: number, last: number): string {
  const lines = ['chain,date,block_timestamp,tx_hash,address,counterparty,direction,amount'];
  const chains = r.options.includeChains ?? [];
  const addresses = r.options.addresses?.length ? r.options.addresses : [''];
  const evm = r.type === EVM_EXPORT;
  for (let day = first; day <= last; day++) {
    for (const chain of chains) {
      for (const address of addresses) {
        const rng = Rng.of(seed, 'export', r.type, chain, address.toLowerCase(), day);
        const n = rng.int(4);
        for (let i = 0; i < n; i++) {
          const at = day * 86_400 + rng.int(86_400);
          const hash = evm ? `0x${rng.hex(32)}` : id32(rng);
          const other = evm ? `0x${rng.hex(20)}` : '';
          const direction = rng.chance(0.5) ? 'in' : 'out';
          const amount = rng.bigBelow(10n ** 21n).toString();
          lines.push([chain, dateOfDay(day), new Date(at * 1000).toISOString(), hash, address.toLowerCase(), other, direction, amount].join(','));
        }
      }
    }
  }
  return lines.join('\n') + '\n';
}
