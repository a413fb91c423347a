// A process for the shared budget tests (test/cluster/budget.test.ts), on the built dist/:
//   node budget-client.mjs '{"url", "service", "key", "windowMs", "cuPerWindow", ...}'
// Once its budget is open it prints `ready` and reads its options again, with the times, on stdin.
// From startAt to stopAt it sends made-up requests as fast as the shared budget lets it, from
// `concurrency` loops that each take a request's weight, then wait `latencyMs` (the answer). If
// pauseAt is set, it reports a 429 at that time (a pause of pauseMs for everyone). A claim that
// fails (the database is away) is noted and tried again a little later; with recoveredSpends set,
// it stops once that many claims have succeeded after its last failed one (the database is back),
// however long the database took to come back. At the end it gives its
// slice back and prints one line: {"pid", "spends": [[ms, windowStart, weight]], "errors": [[ms,
// message]], "pause": {"from", "until"}}.
import { SharedBudget } from '../../dist/cluster/budget.js';

const o = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const budget = await SharedBudget.open(o.url, o);
// Ready: the test then sends, on stdin, the options with the times (startAt, stopAt, pauseAt).
process.stdout.write('ready\n');
let line = '';
for await (const chunk of process.stdin) line += chunk;
Object.assign(o, JSON.parse(line));
const spends = [];
const errors = [];
let pause;
const weights = o.weights ?? [1];
/** Claims granted since the last failed one (a failure sets it to 0). */
let sinceError = 0;
const recovered = () => o.recoveredSpends !== undefined && errors.length > 0 && sinceError >= o.recoveredSpends;

await sleep(o.startAt - Date.now());
async function loop(i) {
  let n = i;
  while (Date.now() < o.stopAt && !recovered()) {
    const weight = weights[n++ % weights.length];
    try {
      const { windowStart } = await budget.take(weight);
      if (Date.now() >= o.stopAt) {
        // Taken too late to send: counted all the same, as a request the run gave up on would be.
        spends.push([Date.now(), windowStart, weight]);
        break;
      }
      spends.push([Date.now(), windowStart, weight]);
      sinceError++;
      await sleep(o.latencyMs ?? 5);
    } catch (e) {
      errors.push([Date.now(), e.constructor.name + ': ' + e.message]);
      sinceError = 0;
      await sleep(100);
    }
  }
}
async function pauser() {
  if (o.pauseAt === undefined) return;
  await sleep(o.pauseAt - Date.now());
  const until = await budget.pause(o.pauseMs);
  pause = { from: Date.now(), until };
}
await Promise.all([pauser(), ...Array.from({ length: o.concurrency ?? 4 }, (_, i) => loop(i))]);
await budget.close();
process.stdout.write(JSON.stringify({ pid: process.pid, spends, errors, pause }) + '\n');
