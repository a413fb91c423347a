// A lake on an S3-compatible store (AWS S3, R2, MinIO, Ceph, GCS's interoperability API) as an
// ObjectStore, and the backend of its lock. Credentials, region and endpoint come from the AWS SDK's
// standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, AWS_REGION,
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL); CHAINLAKE_S3_PATH_STYLE=1 addresses the bucket in the
// path, as local servers need. Nothing here ever puts a credential in a message.
import { createWriteStream, closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type * as Sdk from '@aws-sdk/client-s3';
import { EXIT, RunError, UsageError } from '../errors.js';
import { tempOf, type ObjectInfo, type ObjectStore } from './objects.js';
import { parseS3Url, type S3Location } from './location.js';
import type { LeaseBackend } from './lease.js';


/** Parts of a multipart upload: a file larger than this is sent in parts of this size, one at a time. */
const PART = 16 * 1024 * 1024;

/**
 * The client, from the SDK's standard chain. Retries: the SDK's standard strategy (exponential
 * backoff with jitter) retries 500, 502, 503, 504, throttling answers (503 SlowDown), connection
 * resets and timeouts; chainlake raises its attempts to 8 unless AWS_MAX_ATTEMPTS (or a profile's
 * max_attempts) says otherwise, and bounds a connection at 10 s and a silent socket at 120 s.
 */
function makeClient(sdk: typeof Sdk, region?: string): Sdk.S3Client {
  // The pinned SDK supports Node 20; its notice that later releases will not is not for chainlake's users.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new sdk.S3Client({
    ...(region ? { region } : {}),
    forcePathStyle: process.env.CHAINLAKE_S3_PATH_STYLE === '1',
    // Stores other than AWS (and older releases of them) reject the newer default checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(process.env.AWS_MAX_ATTEMPTS ? {} : { maxAttempts: 8 }),
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
  });
}

interface SdkError {
  name?: string;
  message?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

const statusOf = (err: unknown) => (err as SdkError)?.$metadata?.httpStatusCode;
const nameOf = (err: unknown) => (err as SdkError)?.name ?? (err as SdkError)?.Code ?? '';
const isMissing = (err: unknown) => statusOf(err) === 404 || ['NoSuchKey', 'NotFound'].includes(nameOf(err));
const isPreconditionFailed = (err: unknown) => statusOf(err) === 412 || statusOf(err) === 409 || nameOf(err) === 'PreconditionFailed';

export class S3Objects implements ObjectStore {
  private constructor(
    private readonly sdk: typeof Sdk,
    readonly client: Sdk.S3Client,
    readonly loc: S3Location,
  ) {}

  /** The store of `url`, its bucket checked: a missing bucket is a usage error, a refusal a run error. */
  static async open(url: string): Promise<S3Objects> {
    const loc = parseS3Url(url);
    // Loaded here, not at the top: the SDK takes a fifth of a second to load, and only an s3:// lake needs it.
    const sdk = await import('@aws-sdk/client-s3');
    let client = makeClient(sdk);
    try {
      await client.config.region();
    } catch {
      // No region anywhere in the chain: S3-compatible stores take any, and AWS redirects.
      client = makeClient(sdk, 'us-east-1');
    }
    const s3 = new S3Objects(sdk, client, loc);
    try {
      await client.send(new sdk.HeadBucketCommand({ Bucket: loc.bucket }));
    } catch (err) {
      // HEAD has no body: a missing bucket is a bare 404.
      if (statusOf(err) === 404) throw s3.explain('open', '', Object.assign(new Error('no such bucket'), { name: 'NoSuchBucket' }));
      if (statusOf(err) === 403)
        throw new RunError(`${loc.url}: the store refused access to the bucket (HTTP 403): check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and the bucket's permissions`);
      throw s3.explain('open', '', err);
    }
    return s3;
  }

  get where(): string {
    return this.loc.url;
  }

  /** The store's key of a lake-relative key. */
  key(rel: string): string {
    return this.loc.prefix ? `${this.loc.prefix}/${rel}` : rel;
  }

  /** One request, its failure told as what was asked of which key: the SDK's name and message, never its request. */
  private async call<T>(what: string, rel: string, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      throw this.explain(what, rel, err);
    }
  }

  explain(what: string, rel: string, err: unknown): Error {
    const status = statusOf(err);
    const name = nameOf(err);
    const message = String((err as SdkError)?.message ?? err).split('\n')[0];
    const at = `${this.where}${rel ? ` (${rel})` : ''}`;
    if (name === 'NoSuchBucket') return new UsageError(`--lake ${this.where}: the bucket ${this.loc.bucket} does not exist at this endpoint`);
    if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message))
      // Configuration, as a bad flag is: a rerun alone fails the same (exit 2).
      return new RunError(`${at}: no credentials for the store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (see docs/object-storage.md)`, EXIT.usage);
    const error = new RunError(`${at}: ${what} failed: ${name || 'error'}${status ? ` (HTTP ${status})` : ''}: ${message}`);
    Object.assign(error, { status, code: name });
    return error;
  }

  async put(rel: string, body: string | Buffer, conditions: { IfNoneMatch?: string; IfMatch?: string } = {}): Promise<string> {
    const r = await this.call('put', rel, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.loc.bucket, Key: this.key(rel), Body: typeof body === 'string' ? Buffer.from(body) : body, ...conditions })));
    return r.ETag ?? '';
  }

  private conditional?: Promise<boolean>;

  /**
   * With If-None-Match: * where the store honours it (probed once); where it does not, a HEAD then
   * a PUT, exact for one writer (the lake's lock) and narrow for several.
   */
  async write(rel: string, body: string | Buffer): Promise<void> {
    await this.put(rel, body);
  }

  /** `durable`: nothing to do here, a PUT is durable once answered. */
  async create(rel: string, body: string | Buffer): Promise<boolean> {
    this.conditional ??= probeConditional(this, rel.includes('/') ? `${rel.slice(0, rel.lastIndexOf('/'))}/_create` : '_create');
    if (await this.conditional) {
      try {
        await this.put(rel, body, { IfNoneMatch: '*' });
        return true;
      } catch (err) {
        if ([412, 409].includes((err as { status?: number }).status ?? 0) || isPreconditionFailed(err)) return false;
        throw err;
      }
    }
    if (await this.head(rel)) return false;
    await this.put(rel, body);
    return true;
  }

  async upload(rel: string, file: string): Promise<string> {
    const size = statSync(file).size;
    if (size <= PART) return this.put(rel, readFileSync(file));
    const Key = this.key(rel);
    const Bucket = this.loc.bucket;
    const { UploadId } = await this.call('upload', rel, () => this.client.send(new this.sdk.CreateMultipartUploadCommand({ Bucket, Key })));
    const parts: Array<{ PartNumber: number; ETag: string }> = [];
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(PART);
      for (let offset = 0, n = 1; offset < size; offset += PART, n++) {
        const len = readSync(fd, buf, 0, Math.min(PART, size - offset), offset);
        // A Buffer (not a stream) so that the SDK can send it again on a retry.
        const body = Buffer.from(buf.subarray(0, len));
        const r = await this.call('upload', rel, () => this.client.send(new this.sdk.UploadPartCommand({ Bucket, Key, UploadId, PartNumber: n, Body: body })));
        parts.push({ PartNumber: n, ETag: r.ETag ?? '' });
      }
      const r = await this.call('upload', rel, () => this.client.send(new this.sdk.CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } })));
      return r.ETag ?? '';
    } catch (err) {
      await this.client.send(new this.sdk.AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    } finally {
      closeSync(fd);
    }
  }

  async get(rel: string): Promise<{ body: Buffer; etag: string } | undefined> {
    try {
      const r = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.loc.bucket, Key: this.key(rel) }));
      return { body: Buffer.from(await r.Body!.transformToByteArray()), etag: r.ETag ?? '' };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw this.explain('get', rel, err);
    }
  }

  async download(rel: string, file: string): Promise<string | undefined> {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = tempOf(file);
    // The SDK retries the request; a body cut off midway is fetched again here.
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.loc.bucket, Key: this.key(rel) }));
        await pipeline(r.Body as Readable, createWriteStream(tmp));
        const got = statSync(tmp).size;
        if (r.ContentLength !== undefined && got !== r.ContentLength) throw Object.assign(new Error(`got ${got} of ${r.ContentLength} bytes`), { name: 'TruncatedBody' });
        renameSync(tmp, file);
        return r.ETag ?? '';
      } catch (err) {
        rmSync(tmp, { force: true });
        if (isMissing(err)) return undefined;
        if (attempt >= 4 || statusOf(err) !== undefined) throw this.explain('download', rel, err);
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    const base = this.key('');
    let token: string | undefined;
    do {
      const r = await this.call('list', prefix, () => this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.loc.bucket, Prefix: this.key(prefix), ContinuationToken: token })));
      for (const o of r.Contents ?? []) out.push({ key: o.Key!.slice(base.length), size: o.Size ?? 0, etag: o.ETag ?? '' });
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async head(rel: string): Promise<ObjectInfo | undefined> {
    try {
      const r = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.loc.bucket, Key: this.key(rel) }));
      return { key: rel, size: r.ContentLength ?? 0, etag: r.ETag ?? '' };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw this.explain('head', rel, err);
    }
  }

  /** A server-side copy then the delete of the source: the store has no rename. */
  async move(from: string, to: string): Promise<string | undefined> {
    // URL-encoded, with the characters a path keeps (`=` of a hive folder) as they are: some
    // S3-compatible servers do not decode them in this header.
    const source = encodeURI(`${this.loc.bucket}/${this.key(from)}`);
    let etag: string;
    try {
      const r = await this.client.send(new this.sdk.CopyObjectCommand({ Bucket: this.loc.bucket, Key: this.key(to), CopySource: source }));
      etag = r.CopyObjectResult?.ETag ?? '';
    } catch (err) {
      if (!isMissing(err)) throw this.explain(`copy to ${to}`, from, err);
      // Moved already (a roll-forward repeating a move), or lost: only the first is no error.
      const there = await this.head(to);
      if (there) return undefined;
      throw this.explain(`copy to ${to}`, from, err);
    }
    await this.delete(from);
    return etag;
  }

  async delete(rel: string, ifMatch?: string): Promise<void> {
    await this.call('delete', rel, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.loc.bucket, Key: this.key(rel), ...(ifMatch ? { IfMatch: ifMatch } : {}) })));
  }
}

/**
 * The lake's `_lock` object. Where the store honours conditions, create, replace and remove are
 * each one conditional request (a 412 is the answer "someone else got there"). Where it does not,
 * each is a read of the object's ETag then an unconditional write: two writers acting within the
 * same moment can both pass (docs/object-storage.md says how chainlake narrows that).
 */
export class S3LeaseBackend implements LeaseBackend {
  private constructor(
    private readonly s3: S3Objects,
    readonly conditional: boolean,
    private readonly rel: string,
  ) {}

  static async open(s3: S3Objects, rel = '_lock'): Promise<S3LeaseBackend> {
    return new S3LeaseBackend(s3, await probeConditional(s3, rel), rel);
  }

  get where(): string {
    return `${this.s3.where}/${this.rel}`;
  }

  async create(body: string): Promise<boolean> {
    if (this.conditional) return this.conditionally(() => this.s3.put(this.rel, body, { IfNoneMatch: '*' }));
    if (await this.s3.head(this.rel)) return false;
    await this.s3.put(this.rel, body);
    return true;
  }

  async read(): Promise<{ body: string; version: string } | undefined> {
    const r = await this.s3.get(this.rel);
    return r && { body: r.body.toString('utf8'), version: r.etag };
  }

  async replace(body: string, version: string): Promise<boolean> {
    if (this.conditional) return this.conditionally(() => this.s3.put(this.rel, body, { IfMatch: version }));
    if ((await this.s3.head(this.rel))?.etag !== version) return false;
    await this.s3.put(this.rel, body);
    return true;
  }

  async remove(version: string): Promise<boolean> {
    // AWS S3 honours If-Match on DeleteObject; a store that ignores it deletes whatever is there,
    // so the ETag is compared first in any case (the remaining window is a read-then-delete).
    if ((await this.s3.head(this.rel))?.etag !== version) return false;
    if (this.conditional) return this.conditionally(() => this.s3.delete(this.rel, version));
    await this.s3.delete(this.rel);
    return true;
  }

  private async conditionally(f: () => Promise<unknown>): Promise<boolean> {
    try {
      await f();
      return true;
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 412 || status === 409) return false;
      throw err;
    }
  }
}

/**
 * Whether the store refuses a second create of one key with If-None-Match: * (AWS S3, R2, MinIO
 * and most stores today) or writes it anyway (s3rver). Probed with an object of its own, removed after.
 */
export async function probeConditional(s3: S3Objects, rel: string): Promise<boolean> {
  const probe = `${rel}.probe-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  await s3.put(probe, 'probe');
  try {
    await s3.put(probe, 'probe again', { IfNoneMatch: '*' });
    return false;
  } catch (err) {
    if (isPreconditionFailed(err) || [412, 409].includes((err as { status?: number }).status ?? 0)) return true;
    // 501 NotImplemented and the like: the store does not do conditions.
    if ((err as { status?: number }).status === 501) return false;
    throw err;
  } finally {
    await s3.delete(probe);
  }
}

