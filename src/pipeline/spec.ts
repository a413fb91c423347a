// A run as plain data: what the command line asked for. A run in this process works from it, a
// queued run puts it into each job as it is (JSON in the queue), and a worker reads it back as it
// is; both derive the pipeline and the run's options from it with the functions below, so a
// worker works a partition as the run in one process would.
import { parsePipeline, type Pipeline, type SourceName } from '../config/pipeline.js';
import type { PartitionOptions } from './partition.js';

export interface RunSpec {
  /** The pipeline's text as written: `${VAR}` (API keys) are read where it is parsed, on each worker. */
  pipeline: { file: string; text: string };
  lake: string;
  options: { flushRows?: number; fullRefresh?: string[]; strict?: boolean; keepRaw?: boolean };
  /** Services' URLs that replace the pipeline's (--data-url and the like, the embedded simulator). */
  urls: Partial<Record<SourceName, string>>;
}

/** The options of a spec's run that every process working it shares. */
export type SpecOptions = Pick<PartitionOptions, 'flushRows' | 'fullRefresh' | 'keepRaw'> & { strict?: boolean };

export function specOptions(spec: RunSpec): SpecOptions {
  const { fullRefresh, ...rest } = spec.options;
  return { ...rest, ...(fullRefresh ? { fullRefresh: new Set(fullRefresh) } : {}) };
}

/** Replaces the URLs of the sources that `urls` names; `from` says where each was given (a message asking to correct it names that). */
export function overrideUrls(p: Pipeline, urls: RunSpec['urls'], from: (name: SourceName) => string = (name) => `--${name}-url`): Pipeline {
  for (const [name, url] of Object.entries(urls)) if (url) Object.assign(p.sources[name as SourceName], { url, urlFrom: from(name as SourceName) });
  return p;
}

/** The spec's pipeline, read in this process's environment, with its URL overrides. */
export function specPipeline(spec: RunSpec): Pipeline {
  return overrideUrls(parsePipeline(spec.pipeline.text, spec.pipeline.file), spec.urls);
}
