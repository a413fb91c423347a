// xchain_vertices (the X-Chain's pre-Cortina DAG) against the simulator: every vertex once, each
// parent a vertex of the height below, all before the X-Chain's first block; a rerun adds nothing;
// every page of both vertex listings accepted by the official client.
import { describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { iterate } from '../../src/simulator/listing.js';
import { listVertices } from '../../src/simulator/xchain_vertices.js';
import { listingPages } from '../official.js';
import { expectStillRerun, lakeRows as rows, line, simulatorRun, sorted } from '../helpers.js';

const SEED = 21;

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = [{ table: 'xchain_vertices', network: 'fuji' }];
  return p;
}

describe('xchain_vertices', () => {
  const run = simulatorRun(SEED, pipeline, 500);

  it('every vertex once, as the world has it; parents of the height below; all before Cortina', async () => {
    const want = [...iterate(listVertices(SEED, 'fuji'))].map((v) => line(v.vertexHash, v.vertexHeight, v.vertexIndex, v.vertexTimestamp, v.parentHashes, v.txCount, v.transactions));
    const got = await rows(run.lake, `SELECT vertex_hash, vertex_height, vertex_index, epoch(vertex_timestamp)::BIGINT ts, parent_hashes, tx_count, tx_hashes FROM xchain_vertices`);
    expect(want.length).toBeGreaterThan(100);
    expect(sorted(got.map((r) => line(r.vertex_hash, r.vertex_height, r.vertex_index, r.ts, r.parent_hashes, r.tx_count, r.tx_hashes)))).toEqual(sorted(want));
    const [k] = await rows(run.lake, `SELECT count(*) FILTER (WHERE p.vertex_height <> v.vertex_height - 1 OR p.vertex_hash IS NULL) bad, count(*) n
      FROM (SELECT vertex_height, unnest(parent_hashes) parent FROM xchain_vertices) v LEFT JOIN xchain_vertices p ON p.vertex_hash = v.parent`);
    expect(Number(k!.n)).toBeGreaterThan(100);
    expect(k!.bad).toBe('0');
    const [c] = await rows(run.lake, `SELECT max(vertex_timestamp) < TIMESTAMPTZ '2023-04-25 00:00:00+00' is_before FROM xchain_vertices`);
    expect(c!.is_before).toBe(true);
  });

  it('a rerun adds nothing', async () => {
    await expectStillRerun(run.lake, run.p, ['xchain_vertices']);
  });

  it('every page of both listings is accepted by the official client', async () => {
    expect((await listingPages(run.sim.url, '/v1/networks/fuji/blockchains/x-chain/vertices?pageSize=100', 'xVertices')).length).toBeGreaterThan(3);
    const [v] = (await listingPages(run.sim.url, '/v1/networks/fuji/blockchains/x-chain/vertices:listByHeight?vertexHeight=7&pageSize=1', 'xVerticesByHeight')).flatMap((b) => b.vertices);
    expect(v.vertexHeight).toBe(7);
    expect((await fetch(`${run.sim.url}/v1/networks/fuji/blockchains/p-chain/vertices`)).status).toBe(400);
  });
});
