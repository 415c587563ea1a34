/**
 * The daemon watches its own database file: deleted, replaced by another file,
 * or truncated under it (SQLite never shrinks the file: paybatch runs no
 * VACUUM), or SQLite reporting damage. From then on the daemon takes no more
 * work, says so in the log and on /healthz (503), and waits for a person: what
 * it would record now could be lost at the next start.
 */
import { statSync } from 'node:fs';
import { RESTORE_HINT, isDamage } from '../store/sqlite/database.js';

export class DatabaseHealth {
  private problem: string | null = null;
  private readonly identity: string;
  private size: number;

  constructor(private readonly file: string) {
    const stat = statSync(file);
    this.identity = `${stat.dev}:${stat.ino}`;
    this.size = stat.size;
  }

  /** What is wrong with the database, or null; once wrong, it stays wrong until a restart. */
  check(): string | null {
    if (this.problem) return this.problem;
    const stat = statSync(this.file, { throwIfNoEntry: false });
    if (!stat) this.problem = 'the database file was deleted';
    else if (`${stat.dev}:${stat.ino}` !== this.identity) this.problem = 'the database file was replaced by another file';
    else if (stat.size < this.size) this.problem = `the database file was truncated (${stat.size} bytes, it had ${this.size})`;
    else this.size = stat.size;
    return this.problem;
  }

  /** An error SQLite raised: damage makes the database unhealthy. Returns true when it did. */
  failed(error: unknown): boolean {
    if (!isDamage(error)) return false;
    this.problem ??= `SQLite reports damage: ${(error as Error).message}`;
    return true;
  }

  /** Damage found by the check of the whole database (background-check.ts). */
  damaged(problem: string): void {
    this.problem ??= problem;
  }

  /** What a person should do, said once the database is unhealthy. */
  static readonly advice = RESTORE_HINT;
}
