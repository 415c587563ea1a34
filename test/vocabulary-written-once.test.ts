/**
 * "A search finds no other list of states or phases in src/ (SQL included)
 * outside payout-states.ts" (issue 38): a scan of src/ for lists written out of
 * the service's states and paybatch's phases — an array or set literal, a SQL
 * IN list, a chain of comparisons of one value with two of them — so that a new
 * one fails here and is named in the vocabulary instead. A single word compared
 * (`row.phase === 'final'`) is the typed vocabulary in use, not a list.
 * Released migrations are history, never changed: their indexes keep the lists
 * they were made with (store/schema-changes.ts holds the steps both databases'
 * migrations share, released migrations and nothing else).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PHASES, TX_STATES } from '../src/payout-states.js';

const SRC = new URL('../src/', import.meta.url).pathname;
const EXEMPT = new Set(['payout-states.ts', 'store/sqlite/migrations.ts', 'store/postgres/migrations.ts', 'store/schema-changes.ts']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []);
}

const WORD = `(?:${[...new Set([...TX_STATES, ...PHASES])].join('|')})`;
/** Two words of the vocabulary side by side in a list: `'paid', 'refunded'` (an array, a set, a SQL IN list). */
const LISTED = new RegExp(`'${WORD}'\\s*,\\s*'${WORD}'`, 'g');
/** One value compared with two words: `x === 'ready' || x === 'creating'`. */
const CHAINED = new RegExp(`([\\w.?]+) [!=]== '${WORD}' (?:\\|\\||&&) \\1 [!=]== '${WORD}'`, 'g');

function listsIn(text: string): string[] {
  // Comments name phases in words; only code counts.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/ \/\/ .*$/gm, '');
  return [...code.matchAll(LISTED), ...code.matchAll(CHAINED)].map((match) => match[0]);
}

describe('the vocabulary written once (payout-states.ts)', () => {
  it('finds no other list of states or phases in src/, SQL included', () => {
    const found = files(SRC)
      .map((file) => ({ file: relative(SRC, file), lists: listsIn(readFileSync(file, 'utf8')) }))
      .filter(({ file, lists }) => !EXEMPT.has(file) && lists.length > 0);
    expect(found).toEqual([]);
  });

  it('would find one: an array, a SQL IN list, a chain of comparisons', () => {
    expect(listsIn("const ENDED = ['paid', 'refunded'];")).toHaveLength(1);
    expect(listsIn("const SQL = `SELECT 1 FROM rows WHERE phase IN ('final', 'not_sent')`;")).toHaveLength(1);
    expect(listsIn("if (row.phase === 'ready' || row.phase === 'creating') return;")).toHaveLength(1);
    expect(listsIn("if (row.phase === 'final') return; // 'paid', 'refunded'")).toHaveLength(0);
  });
});
