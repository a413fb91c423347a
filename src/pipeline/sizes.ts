// How big compaction makes files and when a run compacts: here alone, so that the command line
// can say them without loading what compacts.

/** A million rows: about 60 MB of transfers, the file size Parquet readers are made for. */
export const TARGET_ROWS = 1_000_000;

/**
 * After a run, a partition is compacted when at least this many of its files would be merged:
 * an hourly cron run adds a small file a partition, so its files stay under a few dozen, and a
 * backfill's hundreds of batch files become a few files in block order before anyone queries them.
 */
export const AUTO_MIN_FILES = 16;
