// Export operations (docs/services.md, Export operations and signatures): start one, poll
// GET /v1/operations/{operationId} with backoff to an end state, download what it exported into
// the lake, and continue a truncated export (COMPLETED_WITH_WARNING + metadata.nextDate) with a new
// operation from that date until the range is done. Every state an operation is seen in lands in
// the operations table.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { dayOf, type ExportRequest } from '../requests.js';
import { RunError } from '../errors.js';
import type { Client } from '../sources/client.js';
import { Deadline } from '../sources/deadline.js';
import { mib, open, readBody, TooLarge } from '../sources/http.js';
import { checkLink, type LinkPolicy } from './links.js';
import { slug, type StateStore } from '../state/store.js';
import { call, stats } from './call.js';
import { commitOperations, loadOperation, type OperationRow, type RequestFields } from './table.js';
import { withLake } from '../pipeline/session.js';

const START = '/v1/operations/transactions:export';
const STATUS = '/v1/operations/{operationId}';
const END_STATES = new Set(['COMPLETED', 'COMPLETED_WITH_WARNING', 'FAILED']);
/** A file store link is for one file and may be slow to drain; this bounds a hung one. */
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
/** The first poll comes after this long, each next one 1.5 times later, up to MAX_POLL_MS. */
const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 30_000;

interface Operation {
  operationId: string;
  operationType?: string;
  operationStatus: string;
  message?: string;
  metadata: { code?: string; downloadUrl?: string; nextDate?: string };
  createdAtTimestamp?: number;
  updatedAtTimestamp?: number;
}

export interface ExportContext {
  client: Pick<Client, 'get' | 'post'>;
  lake: string;
  /** progress lines (stderr) */
  log: (line: string) => void;
  signal?: AbortSignal;
  /** give up waiting for one operation after this long (it keeps running on the service) */
  maxWaitMs: number;
  /** Where export links may lead, and how large a file may be (links.ts). */
  links: LinkPolicy;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function parseOperation(body: unknown, request: string): Operation {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.operationId !== 'string' || b.operationId === '' || typeof b.operationStatus !== 'string')
    throw new RunError(`${request}: the answer is not an operation (no operationId or operationStatus): ${JSON.stringify(body).slice(0, 200)}`);
  const m = (b.metadata && typeof b.metadata === 'object' ? b.metadata : {}) as Record<string, unknown>;
  const metadata: Operation['metadata'] = {};
  for (const k of ['code', 'downloadUrl', 'nextDate'] as const) if (typeof m[k] === 'string') metadata[k] = m[k];
  return {
    operationId: b.operationId,
    operationStatus: b.operationStatus,
    metadata,
    ...(str(b.operationType) !== undefined ? { operationType: str(b.operationType)! } : {}),
    ...(str(b.message) !== undefined ? { message: str(b.message)! } : {}),
    ...(typeof b.createdAtTimestamp === 'number' ? { createdAtTimestamp: b.createdAtTimestamp } : {}),
    ...(typeof b.updatedAtTimestamp === 'number' ? { updatedAtTimestamp: b.updatedAtTimestamp } : {}),
  };
}

/** The OpenAPI gives the timestamps no unit: seconds past the year 5000 are taken as milliseconds. */
function isoOf(t: number | undefined): string | null {
  if (t === undefined) return null;
  return new Date(t > 1e11 ? t : t * 1000).toISOString();
}

function rowOf(op: Operation, known: RequestFields, type: string | null): OperationRow {
  return {
    operation_id: op.operationId,
    operation_type: op.operationType ?? type,
    operation_status: op.operationStatus,
    first_date: known.first_date,
    last_date: known.last_date,
    options: known.options,
    code: op.metadata.code ?? null,
    message: op.message ?? null,
    next_date: op.metadata.nextDate ?? null,
    created_at: isoOf(op.createdAtTimestamp),
    updated_at: isoOf(op.updatedAtTimestamp),
    continues_operation_id: known.continues_operation_id,
    download_path: known.download_path,
    download_bytes: known.download_bytes,
    download_sha256: known.download_sha256,
    recorded_at: new Date().toISOString(),
  };
}

async function fetchOperation(x: ExportContext, id: string): Promise<Operation> {
  const path = `/v1/operations/${encodeURIComponent(id)}`;
  return parseOperation(await call(() => x.client.get(path, {}, { endpoint: STATUS, stats, weight: 10, ...(x.signal ? { signal: x.signal } : {}) })), `GET ${path}`);
}

function describe(op: Operation): string {
  const code = op.metadata.code ? ` ${op.metadata.code}` : '';
  return `${op.operationStatus}${code}${op.message ? `: ${op.message}` : ''}`;
}

/** Polls with backoff until the operation reaches an end state or `maxWaitMs` runs out. */
async function waitFor(x: ExportContext, first: Operation): Promise<Operation> {
  let op = first;
  let delay = FIRST_POLL_MS;
  const deadline = Date.now() + x.maxWaitMs;
  while (!END_STATES.has(op.operationStatus)) {
    if (Date.now() + delay > deadline)
      throw new RunError(
        `operation ${op.operationId} is still ${op.operationStatus} after ${Math.round(x.maxWaitMs / 1000)} s (--max-wait); it keeps running on the service: \`chainlake export-op status ${op.operationId} --wait\` picks it up`,
      );
    try {
      await sleep(delay, undefined, x.signal ? { signal: x.signal } : {});
    } catch {
      throw new RunError(`stopped; operation ${op.operationId} keeps running on the service: \`chainlake export-op status ${op.operationId} --wait\` picks it up`);
    }
    const next = await fetchOperation(x, op.operationId);
    if (next.operationStatus !== op.operationStatus) x.log(`operation ${op.operationId}: ${describe(next)}`);
    op = next;
    delay = Math.min(delay * 1.5, MAX_POLL_MS);
  }
  return op;
}

/** A plain file name from a link's last path segment (the link itself is never kept or shown). */
function fileNameOf(url: URL): string {
  let last = url.pathname.split('/').pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // keep it encoded; it is cleaned below
  }
  const clean = last.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '');
  return clean.slice(0, 120) || 'export';
}

class Retry extends Error {}

/** Redirects a download follows, each hop checked as the link was. */
const MAX_DOWNLOAD_REDIRECTS = 3;

/**
 * Downloads a link into `dir`, byte for byte as sent (asked with `accept-encoding: identity`, and
 * not decoded whatever the answer says: an export's `.csv.gz` is stored gzipped). The link is a
 * file store's, not the data service's: it carries its own authorization, so the API key is not
 * sent (it would go to another host). Every hop goes to an address the link policy allows, pinned
 * for the connection (links.ts).
 */
async function download(link: string, dir: string, id: string, policy: LinkPolicy, signal?: AbortSignal): Promise<{ file: string; name: string; bytes: number; sha256: string }> {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new RunError(`operation ${id}: its downloadUrl is not a URL`);
  }
  const name = fileNameOf(url);
  const file = join(dir, name);
  const shownOf = (u: URL) => `the download of operation ${id} (${u.origin}${u.pathname})`;
  return pRetry(
    async () => {
      const deadline = new Deadline(DOWNLOAD_TIMEOUT_MS, signal);
      let at = url;
      try {
        for (let hop = 0; ; hop++) {
          const shown = shownOf(at);
          const lookup = await checkLink(at, policy).catch((err: unknown) => {
            throw new AbortError(new RunError(`operation ${id}: ${(err as Error).message}`));
          });
          let res: Awaited<ReturnType<typeof open>>['res'];
          let answer: Awaited<ReturnType<typeof open>>['answer'];
          try {
            ({ res, answer } = await open(at, { method: 'GET', headers: {}, signal: deadline.signal, decode: false, lookup }));
          } catch (err) {
            if (signal?.aborted) throw new AbortError('stopped');
            if (deadline.timedOut) throw new Retry(`${shown}: no answer within ${DOWNLOAD_TIMEOUT_MS / 60_000} min`);
            throw new Retry(`${shown}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
          }
          const location = answer.header('location');
          if (answer.status >= 300 && answer.status < 400 && location !== null) {
            res.destroy();
            if (hop >= MAX_DOWNLOAD_REDIRECTS) throw new AbortError(new RunError(`${shown} redirected more than ${MAX_DOWNLOAD_REDIRECTS} times`));
            try {
              at = new URL(location, at);
            } catch {
              throw new AbortError(new RunError(`${shown} redirected to a location that is not a URL`));
            }
            continue;
          }
          if (answer.status !== 200) {
            const text = await readBody(res, answer, { maxBytes: 4096, decode: false, signal: deadline.signal }).then((b) => b.toString('utf8', 0, 200), () => '');
            const e = new RunError(`${shown} answered ${answer.status}${text ? `: ${text}` : ''}`);
            if (answer.status >= 500 || answer.status === 429) throw new Retry(e.message);
            throw new AbortError(e);
          }
          const announced = answer.header('content-length');
          if (announced !== null && Number(announced) > policy.maxBytes) {
            res.destroy();
            throw new AbortError(new RunError(`${shown}: the file announced is ${announced} bytes, over ${mib(policy.maxBytes)} (sources.data.maxDownloadBytes)`));
          }
          const hash = createHash('sha256');
          let bytes = 0;
          const count = new Transform({
            transform(chunk: Buffer, _enc, done) {
              bytes += chunk.length;
              if (bytes > policy.maxBytes) return done(new TooLarge(policy.maxBytes, 'wire'));
              hash.update(chunk);
              done(null, chunk);
            },
          });
          try {
            await pipeline(res, count, createWriteStream(file));
          } catch (err) {
            if (err instanceof TooLarge) throw new AbortError(new RunError(`${shown}: the file is over ${mib(policy.maxBytes)} (sources.data.maxDownloadBytes); not kept`));
            if (signal?.aborted) throw new AbortError('stopped');
            throw new Retry(`${shown}: broke off after ${bytes} bytes (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
          }
          if (!res.complete || (announced !== null && Number(announced) !== bytes)) throw new Retry(`${shown}: got ${bytes} of ${announced ?? 'its'} bytes`);
          return { file, name, bytes, sha256: hash.digest('hex') };
        }
      } finally {
        deadline.done();
      }
    },
    { retries: 4, minTimeout: 500, factor: 2, randomize: true, ...(signal ? { signal } : {}) },
  ).catch((err: unknown) => {
    throw err instanceof RunError ? err : new RunError((err as Error).message);
  });
}

/** The lake folder of an operation's files: the id as is when it is a plain name. */
function folderOf(id: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id) ? id : slug(id);
}

/**
 * Records an operation as seen, downloading its file first when it has one that the lake does not
 * hold yet; both commit together. Holds the lake's lock for the download and the commit only.
 */
async function record(x: ExportContext, op: Operation, fresh: RequestFields | undefined, type: string | null): Promise<OperationRow> {
  // The lock is waited for: an export must not fail because a run holds the lake. Polling happens
  // outside: a run of hours must not wait on an export.
  return withLake(
    x.lake,
    { wait: true, onWait: (holder) => x.log(`waiting for the lake's lock (held by ${holder})`) },
    async (store: StateStore) => {
      const known: RequestFields = fresh ?? (await loadOperation(store, op.operationId)) ?? {
        first_date: null, last_date: null, options: null, continues_operation_id: null, download_path: null, download_bytes: null, download_sha256: null,
      };
      const link = op.metadata.downloadUrl;
      const done = op.operationStatus === 'COMPLETED' || op.operationStatus === 'COMPLETED_WITH_WARNING';
      if (!done || !link || known.download_path) {
        const row = rowOf(op, known, type);
        await commitOperations(store, [row]);
        return row;
      }
      const staging = store.stagingDir('exports', op.operationId);
      mkdirSync(staging, { recursive: true });
      try {
        const got = await download(link, staging, op.operationId, x.links, x.signal);
        const target = `exports/${folderOf(op.operationId)}/${got.name}`;
        const row = rowOf(op, { ...known, download_path: target, download_bytes: got.bytes, download_sha256: got.sha256 }, type);
        await commitOperations(store, [row], [[got.file, target]]);
        return row;
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    },
  );
}

function failIfFailed(op: Operation): void {
  if (op.operationStatus === 'FAILED')
    throw new RunError(`operation ${op.operationId} FAILED${op.metadata.code ? ` with ${op.metadata.code}` : ''}: ${op.message ?? '(no message)'} (recorded in the operations table)`);
}

/**
 * Starts an export and, with `wait`, follows it (and its continuations) to the end. Returns the
 * rows recorded, in order; a FAILED operation ends it with a RunError after it is recorded.
 */
export async function startExport(x: ExportContext, request: ExportRequest, wait: boolean): Promise<OperationRow[]> {
  const rows: OperationRow[] = [];
  const lastDay = dayOf(request.lastDate!) as number;
  let req = request;
  let previous: string | null = null;
  for (;;) {
    const started = parseOperation(
      await call(() => x.client.post(START, req, { idempotent: false, endpoint: START, stats, weight: 20, ...(x.signal ? { signal: x.signal } : {}) })),
      `POST ${START}`,
    );
    const known: RequestFields = {
      first_date: req.firstDate ?? null, last_date: req.lastDate ?? null, options: req.options, continues_operation_id: previous,
      download_path: null, download_bytes: null, download_sha256: null,
    };
    x.log(`operation ${started.operationId} started (${req.firstDate}..${req.lastDate}): ${describe(started)}`);
    let row = await record(x, started, known, req.type);
    if (!wait) return [...rows, row];
    const op = await waitFor(x, started);
    if (op !== started) row = await record(x, op, known, req.type);
    rows.push(row);
    failIfFailed(op);
    const next = op.metadata.nextDate;
    if (op.operationStatus === 'COMPLETED' || next === undefined) {
      if (op.metadata.code === 'WarnTruncatedExport')
        throw new RunError(`operation ${op.operationId} was truncated (WarnTruncatedExport) without a nextDate to continue from; its part is in the lake`);
      return rows;
    }
    const nextDay = dayOf(next);
    const firstDay = dayOf(req.firstDate!) as number;
    if (typeof nextDay === 'string' || nextDay <= firstDay)
      throw new RunError(`operation ${op.operationId}: the service's nextDate ${JSON.stringify(next)} does not move past ${req.firstDate}; stopping (its part is in the lake)`);
    if (nextDay > lastDay) return rows;
    x.log(`operation ${op.operationId} was truncated (${op.metadata.code ?? 'warning'}); continuing from ${next}`);
    req = { ...req, firstDate: next };
    previous = op.operationId;
  }
}

/** Polls one operation once (or, with `wait`, to its end), records it and downloads its file. */
export async function operationStatus(x: ExportContext, id: string, wait: boolean): Promise<OperationRow> {
  let op = await fetchOperation(x, id);
  if (wait) op = await waitFor(x, op);
  const row = await record(x, op, undefined, null);
  failIfFailed(op);
  return row;
}
