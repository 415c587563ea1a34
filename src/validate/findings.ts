/** Collects a row's errors and warnings as the rules run, so that none stops at the first. */
import type { FieldIssue } from './issue.js';
import { fieldIssue } from './issue.js';

export class Findings {
  readonly errors: FieldIssue[] = [];
  readonly warnings: FieldIssue[] = [];

  error(field: string, code: string, message: string): void {
    this.errors.push(fieldIssue(field, code, message));
  }

  warn(field: string, code: string, message: string): void {
    this.warnings.push(fieldIssue(field, code, message));
  }

  hasError(field: string): boolean {
    return this.errors.some((e) => e.field === field);
  }
}
