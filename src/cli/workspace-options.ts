/**
 * `--home` and `--config`, defined once: the program takes them before the
 * command (`paybatch --home DIR status`), and every command that uses a
 * workspace takes them after its name too (`paybatch status --home DIR`), as
 * it always did. PAYBATCH_HOME and PAYBATCH_CONFIG stand for them when neither
 * is given (src/config/config.ts).
 */
import type { Command } from 'commander';
import { Option } from 'commander';

export type WorkspaceOption = 'home' | 'config';

const GROUP = 'Workspace options:';

export function homeOption(description = 'workspace folder (default: $PAYBATCH_HOME or ./paybatch-data)'): Option {
  return new Option('--home <dir>', description).helpGroup(GROUP);
}

export function configOption(description = 'configuration file (default: $PAYBATCH_CONFIG, else paybatch.config.json in the workspace)'): Option {
  return new Option('--config <file>', description).helpGroup(GROUP);
}

/** The workspace options each command takes: the program's own are given to these only. */
const TAKEN = new WeakMap<Command, ReadonlySet<WorkspaceOption>>();

/**
 * Gives a command `--home` and (unless `config: false`) `--config`, and marks it
 * as one that uses a workspace. `home` replaces the description where the
 * command's workspace is not the usual one (demo, keys generate).
 */
export function withWorkspace(command: Command, options: { config?: boolean; home?: string } = {}): Command {
  command.addOption(homeOption(options.home));
  if (options.config !== false) command.addOption(configOption());
  TAKEN.set(command, new Set<WorkspaceOption>(options.config === false ? ['home'] : ['home', 'config']));
  return command;
}

/** The program's own `--home` and `--config`, and the hook that hands them to the command that runs. */
export function globalWorkspaceOptions(program: Command): Command {
  return program
    .addOption(homeOption())
    .addOption(configOption())
    .hook('preAction', (root, action) => {
      const given = root.opts<Partial<Record<WorkspaceOption, string>>>();
      for (const key of ['home', 'config'] as const) {
        const value = given[key];
        if (value === undefined) continue;
        if (!TAKEN.get(action)?.has(key)) {
          action.error(`error: option '--${key}' does not apply to '${commandPath(action)}'`, { exitCode: 64, code: 'paybatch.globalOption' });
        }
        // Given after the command's name too: that one is nearer, and wins.
        if (action.getOptionValue(key) === undefined) action.setOptionValueWithSource(key, value, 'cli');
      }
    });
}

/** "paybatch webhooks list". */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}
