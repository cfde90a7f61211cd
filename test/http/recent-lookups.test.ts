import { expect } from 'chai';
import { RecentLookups } from '../../readmodels/recent-lookups.js';

describe('recent lookups (the API key and submission source caches, readmodels/recent-lookups.ts)', () => {
  let now = 0;
  const counting = () => {
    const calls: string[] = [];
    return { calls, load: (answer: string | null) => () => (calls.push(String(answer)), Promise.resolve(answer)) };
  };

  beforeEach(() => {
    now = 1_000_000;
  });

  it('answers a key from its last read for ttlMs, then reads again', async () => {
    const recent = new RecentLookups<string | null>({ ttlMs: 1000, now: () => now });
    const { calls, load } = counting();
    expect(await recent.get('a', load('one'))).to.equal('one');
    now += 999;
    expect(await recent.get('a', load('two'))).to.equal('one');
    now += 1;
    expect(await recent.get('a', load('three'))).to.equal('three');
    expect(calls).to.deep.equal(['one', 'three']);
    expect(await recent.get('a', load('fresh'), { fresh: true })).to.equal('fresh');
  });

  it('lets concurrent callers of one key share one read', async () => {
    const recent = new RecentLookups<string>({ now: () => now });
    let release!: (v: string) => void;
    let reads = 0;
    const slow = () => (reads++, new Promise<string>((resolve) => (release = resolve)));
    const both = Promise.all([recent.get('k', slow), recent.get('k', slow)]);
    release('x');
    expect(await both).to.deep.equal(['x', 'x']);
    expect(reads).to.equal(1);
  });

  it('does not keep what `keep` refuses, nor a failed read', async () => {
    const recent = new RecentLookups<string | null>({ keep: (v) => v !== null, now: () => now });
    const { calls, load } = counting();
    expect(await recent.get('miss', load(null))).to.equal(null);
    expect(await recent.get('miss', load('found'))).to.equal('found');
    expect(await recent.get('miss', load('later'))).to.equal('found');
    expect(calls).to.deep.equal(['null', 'found']);
    const failing = () => Promise.reject(new Error('database down'));
    await recent.get('err', failing).then(
      () => expect.fail('should reject'),
      (err: Error) => expect(err.message).to.equal('database down'),
    );
    expect(await recent.get('err', load('back'))).to.equal('back');
  });

  it('forgets the keys under a prefix only, a read in flight included', async () => {
    const recent = new RecentLookups<string>({ now: () => now });
    await recent.get('["w1","a"]', () => Promise.resolve('w1a'));
    await recent.get('["w10","a"]', () => Promise.resolve('w10a'));
    let release!: (v: string) => void;
    const inFlight = recent.get('["w1","b"]', () => new Promise<string>((resolve) => (release = resolve)));
    recent.forget('["w1",');
    release('stale');
    expect(await inFlight).to.equal('stale');
    expect(await recent.get('["w1","a"]', () => Promise.resolve('new'))).to.equal('new');
    expect(await recent.get('["w1","b"]', () => Promise.resolve('new b'))).to.equal('new b');
    expect(await recent.get('["w10","a"]', () => Promise.resolve('not read'))).to.equal('w10a');
  });

  it('holds at most maxEntries, least recently used dropped', async () => {
    const recent = new RecentLookups<string>({ maxEntries: 2, now: () => now });
    for (const k of ['a', 'b', 'c']) await recent.get(k, () => Promise.resolve(k));
    expect(await recent.get('a', () => Promise.resolve('read again'))).to.equal('read again');
    expect(await recent.get('c', () => Promise.resolve('not read'))).to.equal('c');
  });
});
