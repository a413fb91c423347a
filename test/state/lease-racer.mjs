// A process for the lock tests (test/state/lock.test.ts), on the built dist/:
//   node lease-racer.mjs LOCK_DIR VERSION BARRIER
// says {"pid", "ready": true}, waits for the file BARRIER to exist, then replaces the record in
// LOCK_DIR if its version is still VERSION (the file backend's conditional write) and says
// {"pid", "replaced": true | false}.
import { existsSync } from 'node:fs';
import { FileLeaseBackend } from '../../dist/state/lease_file.js';

const [dir, version, barrier] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify({ pid: process.pid, ...o }) + '\n');
say({ ready: true });
while (!existsSync(barrier)) await new Promise((r) => setTimeout(r, 5));
say({ replaced: await new FileLeaseBackend(dir).replace(`written by ${process.pid}`, version) });
