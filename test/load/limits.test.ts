// DuckDB's limits for every instance chainlake opens (src/load/limits.ts): from the library's
// options over the environment, each bad value refused naming where it came from.
import { describe, expect, it } from 'vitest';
import { checkSize, defaultQueryMemory, engineOptions, querySettings } from '../../src/load/limits.js';
import { UsageError } from '../../src/errors.js';

describe('engine options', () => {
  it('reads the environment, and the options win over it', () => {
    const env = { CHAINLAKE_DUCKDB_MEMORY: '3GB', CHAINLAKE_DUCKDB_THREADS: '4', CHAINLAKE_DUCKDB_TEMP: '/spill' };
    expect(engineOptions({}, env)).toEqual({ memoryLimit: '3GB', threads: 4, tempDirectory: '/spill' });
    expect(engineOptions({ memoryLimit: '512mib', threads: 1 }, env)).toEqual({ memoryLimit: '512MiB', threads: 1, tempDirectory: '/spill' });
    expect(engineOptions({}, {})).toEqual({});
    expect(engineOptions({}, { CHAINLAKE_DUCKDB_MEMORY: '' })).toEqual({});
  });

  it('refuses a size or a thread count that is not one, naming where it came from', () => {
    expect(() => engineOptions({}, { CHAINLAKE_DUCKDB_MEMORY: 'lots' })).toThrow(new UsageError('CHAINLAKE_DUCKDB_MEMORY: "lots" is not a size; give a number and a unit, such as 2GB or 512MiB'));
    expect(() => engineOptions({ memoryLimit: '2' })).toThrow(/^memoryLimit: "2" is not a size/);
    expect(() => engineOptions({ memoryLimit: '0GB' })).toThrow(/is not a size/);
    // A setting smuggled into the value never reaches DuckDB.
    expect(() => checkSize('x', "1GB'; SET threads=1; --")).toThrow(UsageError);
    expect(() => engineOptions({}, { CHAINLAKE_DUCKDB_THREADS: '2.5' })).toThrow(/^CHAINLAKE_DUCKDB_THREADS: "2.5" is not a number of threads/);
    expect(() => engineOptions({ threads: 0 })).toThrow(/^threads: 0 is not a number of threads/);
  });

  it('bounds a query by a quarter of the machine, between 512 MiB and 2 GiB, spilling to a folder of its own', () => {
    expect(defaultQueryMemory(4 * 2 ** 30)).toBe('1024MiB');
    expect(defaultQueryMemory(64 * 2 ** 30)).toBe('2048MiB');
    expect(defaultQueryMemory(1 * 2 ** 30)).toBe('512MiB');
    const s = querySettings({ tempDirectory: '/spill' });
    expect(s.temp_directory).toBe(`/spill/chainlake-duckdb-${process.pid}`);
    expect(s.memory_limit).toMatch(/^\d+MiB$/);
    expect(s.threads).toBeUndefined();
    expect(querySettings({ memoryLimit: '1GB', threads: 3 })).toMatchObject({ memory_limit: '1GB', threads: '3' });
  });
});
