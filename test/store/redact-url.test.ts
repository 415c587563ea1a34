import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/store/database-url.js';

describe('the database URL shown to people', () => {
  it('never shows a password, in the user part or as a parameter, nor anything it cannot read plainly', () => {
    expect(redactUrl('postgres://app:s3cret@db.internal:5432/payouts')).toBe('postgres://app@db.internal:5432/payouts');
    expect(redactUrl('postgres://app@db/pay?password=s3cret')).toBe('postgres://app@db/pay');
    expect(redactUrl('postgresql://app@db/pay?sslmode=require&password=s3cret')).toBe('postgresql://app@db/pay');
    for (const odd of ['postgres://app:12/34@db', 'app:s3cret@db/pay', 'postgres://app:s3cret@/pay', 'http://app:s3cret@db/pay']) {
      expect(redactUrl(odd)).not.toMatch(/s3cret|34@db/);
      expect(redactUrl(odd)).toMatch(/withheld/);
    }
  });
});
