// The library's entry point (`import { openLake } from 'chainlake'`): see README, Library (TypeScript).
export { openLake, type Lake, type LakeOptions } from './warehouse/lake.js';
export type { LakeTables } from './tables.js';
export { RunError, UsageError } from './errors.js';
