/** The names files are given once claimed from the inbox: the claim's time, then the file's own name. */

/** A name unique in processing/ and failed/: the time, then the file's own name. */
export function claimName(name: string, at: number): string {
  return `${new Date(at).toISOString().replace(/[:.]/g, '-')}--${name}`;
}

/** When a file in processing/ was claimed (ms), from its claim name; null for a name paybatch did not give. */
export function claimedAtOf(name: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z--/.exec(name);
  return match ? Date.parse(`${match[1]}T${match[2]}:${match[3]}:${match[4]}.${match[5]}Z`) : null;
}
