/**
 * A file whose name holds a control character (a newline, say) is refused
 * before anything else: such a name printed in the log, on standard error or in
 * a report could forge a line there. The file goes to failed/ unread, under its
 * name with each control character replaced by `_`, its companions with it, and
 * a report names it with the characters escaped (`pay\nroll.csv`).
 */
import { lstat, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Clock } from '../clock.js';
import { companionNames, hasControlCharacter, printableName, safeName } from '../workspace/arrival.js';
import { moveSafely, writeFileSafely } from '../workspace/safe-files.js';
import type { Workspace } from '../workspace/workspace.js';
import { claimName } from './claim-names.js';

/** The intake outcomes this gives (a part of intake.ts's IntakeOutcome). */
export type NameRefusal = { kind: 'not_read'; file: string; reportFile: string; reason: string } | { kind: 'gone'; name: string };

/** Null when the name is printable; otherwise the file was moved to failed/ (or was gone) and this says so. */
export async function refuseControlName(inboxPath: string, deps: { workspace: Workspace; clock: Clock }): Promise<NameRefusal | null> {
  const name = basename(inboxPath);
  if (!hasControlCharacter(name)) return null;
  const failed = join(deps.workspace.folders.failed, claimName(safeName(name), deps.clock.now()));
  try {
    await moveSafely(deps.workspace.home, inboxPath, failed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone', name: printableName(name) };
    throw error;
  }
  const { markers, manifests } = companionNames(name);
  for (const [companion, suffix] of [...markers.map((m) => [m, '.done']), ...manifests.map((m) => [m, '.manifest.json'])] as [string, string][]) {
    const from = join(dirname(inboxPath), companion);
    if ((await lstat(from).catch(() => null))?.isFile()) await rename(from, `${failed}${suffix}`).catch(() => {});
  }
  const reason = `its name, "${printableName(name)}", holds a control character (shown escaped), which could forge a line of the log or of a report`;
  const reportFile = `${failed}.report.txt`;
  await writeFileSafely(deps.workspace.home, reportFile, `A file was not taken: ${reason}.\nIt was moved here unread, as ${basename(failed)}; nothing of it was sent. Rename it without the control character and drop it in the inbox again.\n`);
  return { kind: 'not_read', file: failed, reportFile, reason };
}
