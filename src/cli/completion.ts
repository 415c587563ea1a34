/**
 * Shell completion scripts for bash and zsh, generated from the commander
 * definitions the program runs: the commands, each one's options, and the
 * values an option accepts where it lists them (`report --format`). Pure: a
 * program in, a script's text out.
 */
import type { Command } from 'commander';

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** What completion needs of one command: its path from the program (`keys generate`), subcommands and options. */
export interface CompletionNode {
  path: string;
  subcommands: string[];
  options: Array<{ flags: string[]; takesValue: boolean; choices: string[] }>;
}

const WORD = /^[A-Za-z0-9][A-Za-z0-9._-]*$|^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$/;

function word(text: string): string {
  // Everything written into the script is a plain word: nothing to quote, nothing a shell would run.
  if (!WORD.test(text)) throw new Error(`not a plain word for a completion script: ${JSON.stringify(text)}`);
  return text;
}

/** The program's commands as completion needs them, the program itself first (path ""). */
export function completionNodes(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string): void => {
    const options = command.options.filter((o) => !o.hidden).map((o) => ({
      flags: [o.short, o.long].filter((f): f is string => f !== undefined).map(word),
      takesValue: o.required || o.optional,
      choices: (o.argChoices ?? []).map(word),
    }));
    options.push({ flags: ['-h', '--help'], takesValue: false, choices: [] });
    nodes.push({ path, subcommands: command.commands.map((c) => word(c.name())), options });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return nodes;
}

/** A shell `case` over the command's path (and an option), each arm echoing words. */
function caseOf(subject: string, arms: Array<[string, string]>, otherwise = ''): string {
  const lines = arms.map(([key, out]) => `    "${key}") ${out} ;;`);
  if (otherwise) lines.push(`    *) ${otherwise} ;;`);
  return `  case "${subject}" in\n${lines.join('\n')}\n  esac`;
}

/** The functions both shells share: POSIX `case`, no arrays. */
function tables(name: string, nodes: CompletionNode[]): string {
  const withValue = nodes.flatMap((n) => n.options.filter((o) => o.takesValue).flatMap((o) => o.flags.map((f) => `${n.path} ${f}`)));
  const choices = nodes.flatMap((n) => n.options.filter((o) => o.choices.length > 0).flatMap((o) => o.flags.map((f): [string, string] => [`${n.path} ${f}`, `echo "${o.choices.join(' ')}"`])));
  return [
    `_${name}_subcommands() {`, caseOf('$1', nodes.filter((n) => n.subcommands.length > 0).map((n) => [n.path, `echo "${n.subcommands.join(' ')}"`])), '}',
    `_${name}_options() {`, caseOf('$1', nodes.map((n) => [n.path, `echo "${n.options.flatMap((o) => o.flags).join(' ')}"`])), '}',
    `_${name}_takes_value() {`, `  case "$1 $2" in\n    ${withValue.map((k) => `"${k}"`).join('|')}) return 0 ;;\n  esac\n  return 1`, '}',
    `_${name}_values() {`, caseOf('$1 $2', choices), '}',
  ].join('\n');
}

/** Walks the words before the cursor to the command they name; an option's value is stepped over. */
function walk(name: string, first: number, last: string): string {
  return [
    `  for ((i = ${first}; i < ${last}; i++)); do`,
    '    w="${words_[i]}"',
    `    if [[ "$w" == -* ]]; then _${name}_takes_value "$cmd" "$w" && ((i++)); continue; fi`,
    `    subs=" $(_${name}_subcommands "$cmd") "`,
    '    [[ "$subs" == *" $w "* ]] && cmd="${cmd:+$cmd }$w"',
    '  done',
  ].join('\n');
}

function bash(name: string, nodes: CompletionNode[]): string {
  return `# bash completion for ${name}, generated from its commands: source <(${name} completion bash)
${tables(name, nodes)}
_${name}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i w subs values
  local -a words_=("\${COMP_WORDS[@]}")
${walk(name, 1, 'COMP_CWORD')}
  if [[ "$prev" == -* ]] && _${name}_takes_value "$cmd" "$prev"; then
    values="$(_${name}_values "$cmd" "$prev")"
    if [[ -n "$values" ]]; then COMPREPLY=($(compgen -W "$values" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
    return 0
  fi
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$(_${name}_options "$cmd")" -- "$cur")); return 0; fi
  subs="$(_${name}_subcommands "$cmd")"
  if [[ -n "$subs" ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -F _${name} ${name}
`;
}

function zsh(name: string, nodes: CompletionNode[]): string {
  return `#compdef ${name}
# zsh completion for ${name}, generated from its commands: source <(${name} completion zsh), after compinit
${tables(name, nodes)}
_${name}() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" cmd="" i w subs values
  local -a words_
  words_=("\${words[@]}")
${walk(name, 2, 'CURRENT')}
  if [[ "$prev" == -* ]] && _${name}_takes_value "$cmd" "$prev"; then
    values="$(_${name}_values "$cmd" "$prev")"
    if [[ -n "$values" ]]; then compadd -- \${=values}; else _files; fi
    return 0
  fi
  if [[ "$cur" == -* ]]; then values="$(_${name}_options "$cmd")"; compadd -- \${=values}; return 0; fi
  subs="$(_${name}_subcommands "$cmd")"
  if [[ -n "$subs" ]]; then compadd -- \${=subs}; else _files; fi
}
compdef _${name} ${name}
`;
}

/** The completion script for `shell`, from the program's definitions. */
export function completionScript(shell: Shell, program: Command): string {
  const nodes = completionNodes(program);
  const name = word(program.name());
  return shell === 'bash' ? bash(name, nodes) : zsh(name, nodes);
}
