/**
 * The errors the top-level handler knows how to explain. Each carries the exit
 * code the CLI ends with; anything else is a bug and exits with `software`.
 * Exit codes follow sysexits(3) so that cron and systemd can tell them apart.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 64,
  software: 70,
  ioError: 74,
  noPermission: 77,
  config: 78,
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
