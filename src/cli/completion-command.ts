/** `paybatch completion bash|zsh`: the shell completion script, from the same definitions the program runs. */
import { Argument, Command } from 'commander';
import { SHELLS, completionScript } from './completion.js';
import type { Shell } from './completion.js';

/** `buildProgram`: every command, for the script, given by the program that loads this command (no import back to it). */
export function completionCommand(buildProgram: () => Promise<Command>): Command {
  return new Command('completion')
    .description('Print the shell completion script for bash or zsh: source <(paybatch completion bash), or put it where your shell loads completions.')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell) => {
      // Every command, for the script: loaded here, not at start, as help does.
      process.stdout.write(completionScript(shell, await buildProgram()));
    });
}
