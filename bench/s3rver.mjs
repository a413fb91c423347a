#!/usr/bin/env node
// An S3-compatible server for the benchmarks: s3rver (a dev dependency) on a free loopback port,
// its objects in a temporary folder removed when it stops, with the bucket named on the command
// line. Prints `s3rver at http://127.0.0.1:<port>`, then serves until SIGTERM or SIGINT. Its own
// process, so that it shares no event loop with the bench that times the CLI (bench/cpu.mjs).
//   node bench/s3rver.mjs <bucket>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const bucket = process.argv[2] ?? 'bench';
const dir = mkdtempSync(join(tmpdir(), 'chainlake-s3rver-'));
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
process.stdout.write(`s3rver at http://127.0.0.1:${port}\n`);
const stop = async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
