/** The parser of a person's name given on the command line (--as, console login NAME): refused (exit 64) when it has a control character. */
import { InvalidArgumentError } from 'commander';
import { personNameProblem } from '../audit/names.js';

export function parsePersonName(value: string): string {
  const problem = personNameProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}
