/**
 * The pure parts of the store's shared SQL: placeholders numbered for
 * PostgreSQL, the budget's decision, and the lists generated from the
 * vocabulary (no phase list written out in a statement).
 */
import { describe, expect, it } from 'vitest';
import { NEVER_SENT_PHASES, REASONS, UNSETTLED_PHASES } from '../../src/payout-states.js';
import { exceedsBudget } from '../../src/store/queries/budget.js';
import { numbered } from '../../src/store/queries/connection.js';
import { EXTERNAL_ID_USED, NEVER_SENT, NOT_SENDABLE, UNSETTLED } from '../../src/store/sql-lists.js';

describe('SQL written once for both databases', () => {
  it('numbers ? placeholders in order for PostgreSQL, leaving quoted text and $n alone', () => {
    expect(numbered('SELECT 1 FROM rows WHERE a = ? AND b IN (?, ?) LIMIT ?')).toBe('SELECT 1 FROM rows WHERE a = $1 AND b IN ($2, $3) LIMIT $4');
    expect(numbered("SELECT '?' AS q, x FROM t WHERE y = ?")).toBe("SELECT '?' AS q, x FROM t WHERE y = $1");
    expect(numbered('UPDATE t SET a = $1 WHERE b = $2 AND c > $1')).toBe('UPDATE t SET a = $1 WHERE b = $2 AND c > $1');
  });

  it('decides the budget in integers: at the budget is within it, one minor unit over is not, no budget is never exceeded', () => {
    const reserve = (amount: bigint, budget: bigint | null) => ({ currency: 'USD', amount, budget });
    expect(exceedsBudget(900n, reserve(100n, 1000n))).toBe(false);
    expect(exceedsBudget(901n, reserve(100n, 1000n))).toBe(true);
    expect(exceedsBudget(9_007_199_254_740_993n, reserve(1n, 9_007_199_254_740_993n))).toBe(true);
    expect(exceedsBudget(10n ** 30n, reserve(1n, null))).toBe(false);
  });

  it('generates its lists of phases and reasons from the vocabulary', () => {
    expect(NEVER_SENT).toBe(`(${NEVER_SENT_PHASES.map((p) => `'${p}'`).join(', ')})`);
    expect(UNSETTLED).toBe(`(${UNSETTLED_PHASES.map((p) => `'${p}'`).join(', ')})`);
    expect(NOT_SENDABLE).not.toContain("'not_sent'");
    expect(EXTERNAL_ID_USED).toBe(`'${REASONS.externalIdAlreadyUsed}'`);
  });
});
