// An S3-compatible server for the tests: s3rver (from the npm registry) in this process on a free
// loopback port, its objects in a temporary folder; the environment a chainlake process needs to
// reach it (credentials, region, endpoint, path-style, a cache folder of its own, nothing read from
// ~/.aws and no instance metadata); a proxy in front of it that injects faults (503 SlowDown,
// resets) or answers conditional writes as AWS does (412), which s3rver ignores; and the lake's
// objects downloaded into a folder, to compare with a local lake.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import S3rver from 's3rver';

export const BUCKET = 'lakes';
/** s3rver knows one access key; it does not check SigV4 signatures, so any secret is accepted. */
export const ACCESS_KEY = 'S3RVER';

export interface S3Server {
  endpoint: string;
  /** Where s3rver keeps the objects. */
  dir: string;
  close(): Promise<void>;
}

/** The part of s3rver's filesystem store that writes objects (lib/stores/filesystem.js). */
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  putObject(object: { bucket: string; key: string; content: Buffer | Readable; metadata: Record<string, string> }): Promise<{ size: number; md5: string }>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: Record<string, string>): Promise<Record<string, unknown>>;
}

/**
 * s3rver writes an object in place: a GET while a PUT or a copy is under way, or after a PUT cut
 * off by a killed writer, reads the object truncated (even empty), with a Content-Length to match.
 * S3 never serves that: a PUT is atomic, a reader sees the old object or the new one, and a PUT cut
 * off leaves the old one. Here its store writes each object to a file of its own and renames it
 * over the object once whole, as S3 behaves (the object first, then its ETag: a reader in between
 * sees the new bytes under the old ETag, and fetches them again when it sees the new one).
 */
function atomicWrites(store: S3rverStore): void {
  const land = async (objectPath: string, write: (tmp: string) => Promise<void>): Promise<void> => {
    mkdirSync(dirname(objectPath), { recursive: true });
    const tmp = `${objectPath}.put-${randomUUID()}`;
    try {
      await write(tmp);
      renameSync(tmp, objectPath);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  };
  store.putObject = async function (object) {
    const md5 = createHash('md5');
    let size = 0;
    await land(this.getResourcePath(object.bucket, object.key, 'object'), async (tmp) => {
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          md5.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      await pipeline(Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content, count, createWriteStream(tmp));
    });
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
  store.copyObject = async function (srcBucket, srcKey, destBucket, destKey, replacementMetadata) {
    const from = (resource: string) => this.getResourcePath(srcBucket, srcKey, resource);
    const to = (resource: string) => this.getResourcePath(destBucket, destKey, resource);
    if (from('object') !== to('object')) {
      await land(to('object'), async (tmp) => copyFileSync(from('object'), tmp));
      if (!replacementMetadata) for (const r of ['object.md5', 'metadata.json']) if (existsSync(from(r))) copyFileSync(from(r), to(r));
    }
    if (replacementMetadata) await this.putMetadata(destBucket, destKey, replacementMetadata);
    return this.getMetadata(destBucket, destKey);
  };
}

export async function startS3(): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'cl-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: BUCKET }] });
  atomicWrites((server as unknown as { store: S3rverStore }).store);
  const { port } = (await server.run()) as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, dir, close: () => server.close() };
}

/** The environment of a chainlake process using the store at `endpoint`. */
export function s3Env(endpoint: string, o: { secret?: string; cache?: string } = {}): Record<string, string> {
  const none = join(tmpdir(), 'no-aws-config');
  return {
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: o.secret ?? 'test-secret',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_S3: endpoint,
    CHAINLAKE_S3_PATH_STYLE: '1',
    CHAINLAKE_CACHE: o.cache ?? mkdtempSync(join(tmpdir(), 'cl-cache-')),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: none,
    AWS_SHARED_CREDENTIALS_FILE: none,
    // A retry waits up to seconds: a test that makes requests fail for good fails them once.
    AWS_MAX_ATTEMPTS: '8',
  };
}

/** Sets `env` in this process (the SDK reads process.env) until the returned function restores it. */
export function useEnv(env: Record<string, string>): () => void {
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

export type Fault = 'slowdown' | 'reset' | 'error500' | undefined;

export interface ProxyRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/**
 * A loopback proxy in front of the store. `fault` may answer a request with 503 SlowDown, 500, or
 * a reset connection instead of passing it on. With `conditional`, PUTs with If-None-Match: * or
 * If-Match and DELETEs with If-Match are checked against the object (a HEAD to the store, one
 * conditional request at a time) and refused with 412 PreconditionFailed as AWS S3 answers.
 */
export async function s3Proxy(
  target: string,
  o: { fault?: (r: ProxyRequest, n: number) => Fault; conditional?: boolean } = {},
): Promise<{ url: string; requests: ProxyRequest[]; faults: Record<string, number>; refused: number; close(): Promise<void> }> {
  const to = new URL(target);
  const requests: ProxyRequest[] = [];
  const faults: Record<string, number> = {};
  let refused = 0;
  let turn: Promise<unknown> = Promise.resolve();
  const pass = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const etagOf = (path: string) =>
    new Promise<string | undefined>((resolve) => {
      const head = request({ host: to.hostname, port: to.port, method: 'HEAD', path }, (answer) => {
        answer.resume();
        resolve(answer.statusCode === 200 ? String(answer.headers.etag) : undefined);
      });
      head.on('error', () => resolve(undefined));
      head.end();
    });
  const preconditionFailed = (res: ServerResponse, condition: string) => {
    refused++;
    res.writeHead(412, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>${condition}</Condition></Error>`);
  };
  const server = createServer((req, res) => {
    const r: ProxyRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    requests.push(r);
    const fault = o.fault?.(r, requests.length);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (fault) faults[fault] = (faults[fault] ?? 0) + 1;
      if (fault === 'reset') return req.socket.destroy();
      if (fault === 'slowdown' || fault === 'error500') {
        const [status, code, message] = fault === 'slowdown' ? [503, 'SlowDown', 'Please reduce your request rate.'] : [500, 'InternalError', 'We encountered an internal error. Please try again.'];
        res.writeHead(status, { 'content-type': 'application/xml' });
        return res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
      }
      const ifNoneMatch = req.headers['if-none-match'];
      const ifMatch = req.headers['if-match'];
      if (!o.conditional || (req.method !== 'PUT' && req.method !== 'DELETE') || (ifNoneMatch === undefined && ifMatch === undefined)) return pass(req, res, body);
      // One conditional request at a time: the check and the write are one step, as in the store.
      const path = (req.url ?? '').split('?')[0]!;
      const done = turn.then(async () => {
        const etag = await etagOf(path);
        if (ifNoneMatch === '*' && etag !== undefined) return preconditionFailed(res, 'If-None-Match');
        if (ifMatch !== undefined && ifMatch !== etag) return preconditionFailed(res, 'If-Match');
        await new Promise<void>((resolve) => {
          res.on('finish', resolve);
          res.on('close', resolve);
          pass(req, res, body);
        });
      });
      turn = done.catch(() => undefined);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Every object of the lake at `url` written to `dir` at its key (the env must point at the store). */
export async function downloadLake(url: string, dir: string, o: { only?: (key: string) => boolean } = {}): Promise<string[]> {
  const { S3Objects } = await import('../src/state/s3.js');
  const s3 = await S3Objects.open(url);
  const keys = (await s3.list('')).map((x) => x.key).filter(o.only ?? (() => true));
  for (const key of keys) {
    const got = await s3.get(key);
    mkdirSync(dirname(join(dir, key)), { recursive: true });
    writeFileSync(join(dir, key), got!.body);
  }
  return keys;
}
