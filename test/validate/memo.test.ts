import { describe, expect, it } from 'vitest';
import { Memo } from '../../src/validate/memo.js';

describe('a memo that notices when it is not helping', () => {
  it('keeps answers while they are asked for again, within its limit', () => {
    const memo = new Memo<string, number>(2, 4, 0.25);
    memo.set('a', 1);
    expect(memo.get('a')).toBe(1);
    memo.set('b', 2);
    memo.set('c', 3); // over the limit: starts afresh
    expect(memo.get('a')).toBeUndefined();
    expect(memo.get('c')).toBe(3);
  });

  it('stops storing after a window of misses', () => {
    const memo = new Memo<number, number>(100, 4, 0.5);
    for (let i = 0; i < 4; i++) expect(memo.get(i)).toBeUndefined(); // a window of misses
    memo.set(99, 1);
    expect(memo.get(99)).toBeUndefined(); // not stored
    memo.get(1);
    memo.get(2);
    memo.get(3); // the window ends at 0 hits: still not storing
    memo.set(7, 7);
    expect(memo.get(7)).toBeUndefined();
  });
});
