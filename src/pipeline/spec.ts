// A run as plain data: what the command line asked for. A run in this process works from it, a
// queued run puts it into each job as it is (JSON in the queue), and a worker reads it back as it
// is; both derive the pipeline (specPipeline) and the jobs (plan.ts planJobs, which resolves each
// job's full refresh) from it, so a worker works a partition as the run in one process would.
import { parsePipeline, type Pipeline, type SourceName } from '../config/pipeline.js';

/** The options of a run that every process working it shares, in the one form they take. */
export interface SpecOptions {
  /** Rows buffered per partition before a commit (default 10000). */
  flushRows?: number;
  /** Tables rebuilt from scratch (their old files replaced when the rebuild commits); planning resolves it per job. */
  fullRefresh?: string[];
  /** Rejected rows fail the run. */
  strict?: boolean;
  /** Keep every page as sent, compressed, under _raw/ (default true): `rebuild` re-derives from it. */
  keepRaw?: boolean;
}

export interface RunSpec {
  /** The pipeline's text as written: `${VAR}` (API keys) are read where it is parsed, on each worker. */
  pipeline: { file: string; text: string };
  options: SpecOptions;
  /** Services' URLs that replace the pipeline's (--data-url and the like, the embedded simulator). */
  urls: Partial<Record<SourceName, string>>;
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
