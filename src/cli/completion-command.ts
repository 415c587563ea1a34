/** `paybatch completion bash|zsh`: the shell completion script, from the same definitions the program runs. */
import { Argument, Command } from 'commander';
import { SHELLS, completionScript } from './completion.js';
import type { Shell } from './completion.js';

export function completionCommand(): Command {
  return new Command('completion')
    .description('Print the shell completion script for bash or zsh: source <(paybatch completion bash), or put it where your shell loads completions.')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell) => {
      // Every command, for the script: loaded here, not at start, as help does.
      const { buildProgram } = await import('./program.js');
      process.stdout.write(completionScript(shell, await buildProgram()));
    });
}
