// s3rver ships no types: what the tests use of it.
declare module 's3rver' {
  export default class S3rver {
    constructor(o: { port?: number; address?: string; silent?: boolean; directory: string; configureBuckets?: Array<{ name: string }> });
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
