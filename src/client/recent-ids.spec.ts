import { RecentIds } from './recent-ids';

describe(RecentIds.name, () => {
  it('forgets the oldest id past its capacity', () => {
    const sut = new RecentIds(2);
    sut.add('a');
    sut.add('b');
    sut.add('c');
    expect(['a', 'b', 'c'].map((id) => sut.has(id))).toEqual([false, true, true]);
  });
});
