/**
 * Every bidi control is refused in a person's name, U+061C ARABIC LETTER MARK
 * among them (found by an attack: it once passed while U+200F was refused).
 */
import { describe, expect, it } from 'vitest';
import { personNameProblem } from '../../src/audit/names.js';

describe('names with a bidi mark', () => {
  it('U+061C is refused as U+200F is', () => {
    expect(personNameProblem('ada\u200fgrace')).toMatch(/control characters \(U\+200F/);
    expect(personNameProblem('ada\u061cgrace')).toMatch(/control characters \(U\+061C/);
  });
});
