/** Which PostgreSQL statements are prepared once per connection (src/store/postgres/prepared.ts): the rules, pure. */
import { describe, expect, it } from 'vitest';
import { statementOf } from '../../src/store/postgres/prepared.js';

const marks = (n: number): string => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');

describe('statements prepared once per connection', () => {
  it('names a statement by its text: the same name for the same text, another for another', () => {
    const claim = statementOf('UPDATE rows SET claimed_by = $3 WHERE batch_id = $1 AND line = $2', true);
    expect(claim.name).toMatch(/^pb_[0-9a-f]{24}$/);
    expect(statementOf('UPDATE rows SET claimed_by = $3 WHERE batch_id = $1 AND line = $2', true)).toEqual(claim);
    expect(statementOf('UPDATE rows SET claimed_by = $3 WHERE batch_id = $1 AND line = $2 ', true).name).not.toBe(claim.name);
    expect(claim.text).toBe('UPDATE rows SET claimed_by = $3 WHERE batch_id = $1 AND line = $2');
  });

  it('sends unnamed a statement built for a list of values (over 32 parameters): each length would stay prepared', () => {
    expect(statementOf(`SELECT line FROM rows WHERE line IN (${marks(32)})`, true).name).not.toBeNull();
    expect(statementOf(`SELECT line FROM rows WHERE line IN (${marks(33)})`, true).name).toBeNull();
    // A parameter used twice counts once.
    expect(statementOf(`SELECT line FROM rows WHERE line IN (${marks(32)}) OR line = $1`, true).name).not.toBeNull();
  });

  it("sends unnamed a statement reading `*`, which a column added by a newer worker's migration would break; COUNT(*) is no such read", () => {
    expect(statementOf('SELECT * FROM batches WHERE id = $1', true).name).toBeNull();
    expect(statementOf('SELECT b.* FROM batches b WHERE id = $1', true).name).toBeNull();
    expect(statementOf('UPDATE batches SET status = $1 RETURNING *', true).name).toBeNull();
    expect(statementOf('SELECT COUNT(*) AS n FROM rows WHERE batch_id = $1', true).name).not.toBeNull();
    expect(statementOf('SELECT count(*) AS n FROM rows WHERE batch_id = $1', true).name).not.toBeNull();
  });

  it('sends unnamed several statements in one text, and every statement when preparing is off (store.prepared_statements)', () => {
    expect(statementOf('SELECT 1; SELECT 2', true).name).toBeNull();
    expect(statementOf('SELECT line FROM rows WHERE batch_id = $1', false)).toEqual({ text: 'SELECT line FROM rows WHERE batch_id = $1', name: null });
  });
});
