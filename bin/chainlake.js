#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build` (run automatically by `npm ci` through `prepare`).
import('../dist/cli/main.js').then((m) => m.main(process.argv.slice(2))).catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('chainlake: dist/ is missing; run `npm run build` (npm ci does it through prepare)\n');
    process.exit(2);
  }
  throw err;
});
