/** "90s", "10m", "2h", "1500ms" or plain seconds, to milliseconds. */
import { InvalidArgumentError } from 'commander';

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new InvalidArgumentError('a duration such as 90s, 10m or 2h');
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * factor);
}
