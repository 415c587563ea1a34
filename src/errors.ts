/**
 * The errors the top-level handler knows how to explain. Each carries the exit
 * code the CLI ends with; anything else is a bug and exits with `software`.
 * Exit codes follow sysexits(3) so that cron and systemd can tell them apart.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  /** The run finished, but rows need a person: an answer that did not match its request, a funding refused, the balance run out. */
  attention: 3,
  usage: 64,
  /** The state database cannot be used by this paybatch: newer than it, or damaged. */
  dataError: 65,
  /** The payout service did not answer. */
  unavailable: 69,
  software: 70,
  /** A path paybatch would write through is a symbolic link, or leads outside the workspace. */
  cantCreate: 73,
  /**
   * Try again later: the workspace was taken over by another paybatch while this one ran, or the shared database
   * (PostgreSQL) cannot be reached. It stopped; nothing is lost, the next run carries on from the database.
   */
  tempFail: 75,
  /** The disk is full or cannot be written. */
  ioError: 74,
  noPermission: 77,
  config: 78,
  /** Stopped by Ctrl-C (SIGINT), as shells report it (128 + 2): nothing is lost, the next run resumes. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class PaybatchError extends Error {
  readonly exitCode: ExitCodeValue;

  constructor(message: string, exitCode: ExitCodeValue, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** Configuration that cannot be used: names the file and the bad key. */
export class ConfigError extends PaybatchError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.config, options);
  }
}

/** The command line asks for something impossible (exit 64), beyond what the parser checks. */
export class UsageError extends PaybatchError {
  constructor(message: string) {
    super(message, ExitCode.usage);
  }
}

/** The payout service cannot be reached or keeps failing (exit 69): nothing is lost, the next run carries on. */
export class ServiceUnavailable extends PaybatchError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.unavailable, options);
  }
}

/** The state database cannot be used by this paybatch (exit 65). */
export class DatabaseUnusable extends PaybatchError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.dataError, options);
  }
}

/**
 * The shared database (PostgreSQL) cannot be reached, or its connection was lost (exit 75): what was under way is
 * taken up again from what is stored, by this worker while its lease holds or by the next run.
 */
export class DatabaseUnreachable extends PaybatchError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.tempFail, options);
  }
}

/** The disk refused a write (full, read-only, quota): exit 74, one line. */
export class DiskError extends PaybatchError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, ExitCode.ioError, options);
  }
}

const DISK_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG']);

/** An operating-system error that means the disk refused a write, as a DiskError; anything else as it was. */
export function asDiskError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return error;
  if (DISK_CODES.has(code) || code === 'SQLITE_FULL' || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_')) {
    const what = code === 'ENOSPC' || code === 'SQLITE_FULL' ? 'the disk is full' : code === 'EROFS' ? 'the file system is read-only' : code === 'EDQUOT' ? 'the disk quota is exhausted' : `the disk refused a write (${code})`;
    return new DiskError(`${what}: free space (or fix the disk) and run again; nothing is lost, the next run carries on from the database`, { cause: error });
  }
  return error;
}

const PATH_CODES: Readonly<Record<string, { what: string; exitCode: ExitCodeValue }>> = {
  ENOENT: { what: 'no such file or folder', exitCode: ExitCode.cantCreate },
  ENOTDIR: { what: 'a part of the path is not a folder', exitCode: ExitCode.cantCreate },
  EISDIR: { what: 'it is a folder', exitCode: ExitCode.cantCreate },
  EEXIST: { what: 'it already exists', exitCode: ExitCode.cantCreate },
  EACCES: { what: 'permission denied', exitCode: ExitCode.noPermission },
  EPERM: { what: 'operation not permitted', exitCode: ExitCode.noPermission },
};

/**
 * An operating-system error about a path the person gave (a folder that is not
 * there, one they may not write): their input, not a bug, so one line and an
 * exit code of its own; anything else as it was.
 */
export function asPathError(error: unknown): unknown {
  const { code, path, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  const known = typeof code === 'string' ? PATH_CODES[code] : undefined;
  if (!known || typeof path !== 'string') return error;
  return new PaybatchError(`cannot ${syscall ?? 'use'} ${path}: ${known.what}`, known.exitCode, { cause: error });
}
