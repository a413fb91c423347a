// The one codec of lake file names (src/state/names.ts): what a name says comes back as written,
// names written before it still read, and order within a partition comes from the seq, not a clock.
import { describe, expect, it } from 'vitest';
import { chunkTag, compareNames, fileName, nextSeq, nextStem, PARQUET_EXT, partitionStem, RAW_EXT, readName, slug, stemText, writerMark, type ListingTag } from '../../src/state/names.js';

const byOrder = (a: string, b: string) => compareNames(readName(a), readName(b));

const part = slug('43114/0xb10644cea485f69a5f8859e127911157a0d6d30d');

describe('lake file names', () => {
  it('read back what they were made with, for every listing and extension', () => {
    const listings: Array<ListingTag | undefined> = [
      undefined,
      chunkTag(100, { from: 150, to: 200 }),
      chunkTag(0, { from: 0, to: Infinity }),
      { kind: 'range', start: 1700000000 },
      { kind: 'compact' },
    ];
    for (const listing of listings)
      for (const ext of [PARQUET_EXT, RAW_EXT] as const) {
        const name = fileName(stemText({ partition: part, listing, seq: 42 }), writerMark(), ext);
        const r = readName(`_raw/erc_transfers/chain=43114/${name}`)!;
        expect(r, name).toMatchObject({ partition: part, seq: 42, ext, order: [1, 42, 0] });
        expect(r.listing, name).toEqual(listing);
      }
    expect(readName(fileName(stemText({ partition: part, listing: chunkTag(0, { from: 5, to: Infinity }), seq: 1 }), 'x', RAW_EXT))!.listing).toEqual({ kind: 'chunk', window: 0, end: 'head', floor: 5 });
  });

  it('two files of one stem never share a name', () => {
    const stem = stemText({ partition: part, seq: 1 });
    const names = new Set(Array.from({ length: 1000 }, () => fileName(stem, writerMark(), PARQUET_EXT)));
    expect(names.size).toBe(1000);
  });

  it('read names written before the codec, which come first, in the order of their time', () => {
    const old = `${part}.w100.c200.f150-1234-1700000000123-7.ndjson.br`;
    expect(readName(old)).toMatchObject({ partition: part, listing: { kind: 'chunk', window: 100, end: 200, floor: 150 }, order: [0, 1700000000123, 7] });
    expect(readName(`${part}-compact-99-1700000000999-0.parquet`)).toMatchObject({ listing: { kind: 'compact' } });
    expect(readName(`${part}.chunk1700-99-1700000000999-0.ndjson.br`)!.listing).toEqual({ kind: 'range', start: 1700 });
    const later = `${part}-1234-1700000000124-0.ndjson.br`;
    const mine = fileName(stemText({ partition: part, seq: 0 }), writerMark(), RAW_EXT);
    expect([mine, later, old].sort(byOrder)).toEqual([old, later, mine]);
    expect(readName('notes.txt')).toBeUndefined();
  });

  it('order by seq whatever the writer, and the next seq follows every file a partition holds', () => {
    const at = (seq: number, writer: string) => fileName(stemText({ partition: part, seq }), writer, RAW_EXT);
    const files = [at(10, 'zzz'), at(2, 'aaa'), at(9, '000')];
    expect([...files].sort(byOrder)).toEqual([at(2, 'aaa'), at(9, '000'), at(10, 'zzz')]);
    expect(nextSeq(files)).toBe(11);
    expect(nextSeq([])).toBe(0);
    expect(nextSeq([`${part}-1234-1700000000124-0.ndjson.br`])).toBe(0);
  });
});

describe("a partition's next name", () => {
  it('is the slug of its id and one more than the highest seq it holds, with its listing; read back as such', () => {
    const files = [`t/${fileName(stemText({ partition: slug('43114'), seq: 4 }), writerMark(), PARQUET_EXT)}`, `t/${fileName(stemText({ partition: slug('43114'), seq: 1 }), writerMark(), PARQUET_EXT)}`];
    expect(nextStem('43114', files)).toBe(`${slug('43114')}-n5`);
    expect(nextStem('43114', [])).toBe(`${slug('43114')}-n0`);
    const compact = nextStem('a b/c', files, { kind: 'compact' });
    expect(compact).toMatch(/^a_b_c-[0-9a-f]{10}\.compact-n5$/);
    expect(readName(fileName(compact, writerMark(), PARQUET_EXT))).toMatchObject({ partition: slug('a b/c'), listing: { kind: 'compact' }, seq: 5 });
    expect(partitionStem('43114', 7, { kind: 'range', start: 100 })).toBe(`${slug('43114')}.chunk100-n7`);
  });
});
