// A process for the lock tests (test/state/lock.test.ts), on the built dist/:
//   node lock-holder.mjs LAKE [BARRIER]
// says {"pid", "ready": true} and waits for the file BARRIER to exist (when given), tries to take LAKE's lock once and prints one
// JSON line: {"pid", "held": true} or {"pid", "refused": message}. While holding, it takes
// commands on stdin, one a line, answering each with a JSON line:
//   commit   a commit through a StateStore fenced by the lock: {"committed": true} or {"refused": message}
//   status   {"lost": whether a renewal found the lock taken over}
//   release  releases the lock and exits
// Its lease bound comes from CHAINLAKE_LEASE_SECONDS. It never exits on its own: kill it.
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { LakeLock } from '../../dist/state/lock.js';
import { StateStore } from '../../dist/state/store.js';

const [lake, barrier] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify({ pid: process.pid, ...o }) + '\n');
setInterval(() => {}, 1 << 30);

if (barrier) {
  say({ ready: true });
  while (!existsSync(barrier)) await new Promise((r) => setTimeout(r, 5));
}
let lock;
try {
  lock = await LakeLock.tryAcquire(lake);
} catch (err) {
  say({ refused: err.message });
}
if (lock) {
  say({ held: true });
  const store = new StateStore(lake, { fence: () => lock.assertHeld() });
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'commit') {
      try {
        await store.commit({ table: 'fenced', partition: 'p', files: [], rows: 0, rejects: 0, cursor: { nextBlock: 1 } }, []);
        say({ committed: true });
      } catch (err) {
        say({ refused: err.message });
      }
    } else if (line === 'status') say({ lost: lock.lost });
    else if (line === 'release') {
      await lock.release();
      say({ released: true });
      process.exit(0);
    }
  }
}
