/**
 * The temporary files exceljs sets sheets aside in. exceljs makes each with
 * the `tmp` package (a file created and held open, with a callback that
 * closes and deletes it) and calls that callback once it has handed the sheet
 * over. When the archive fails first (a part refused as it inflates, an archive
 * cut short) it never does: the file and its descriptor stay, and a daemon
 * reading many such files would run out of either. So the callback `tmp` gives
 * exceljs is kept here by path, and a reader that gives up calls it for the
 * sheets it saw set aside (part-guard.ts), and only those: other reads may be
 * under way at the same time.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

type Cleanup = (next?: () => void) => void;
type FileCallback = (error: Error | null, path: string, fd: number, cleanup: Cleanup) => void;

/** Each temporary file `tmp` made and no one has cleaned up yet, by path. */
const pending = new Map<string, Cleanup>();

/** Wraps `tmp.file`, the very module exceljs requires (resolved from exceljs's own folder). */
function keepCleanups(): void {
  const fromExceljs = createRequire(createRequire(import.meta.url).resolve('exceljs'));
  const tmp = fromExceljs('tmp') as { file: (...args: unknown[]) => void };
  const file = tmp.file.bind(tmp);
  tmp.file = (...args: unknown[]): void => {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      args[args.length - 1] = ((error, path, fd, cleanup) => {
        if (error) return (callback as FileCallback)(error, path, fd, cleanup);
        const once: Cleanup = (next) => {
          pending.delete(path);
          cleanup(next);
        };
        pending.set(path, once);
        return (callback as FileCallback)(error, path, fd, once);
      }) satisfies FileCallback;
    }
    file(...args);
  };
}
keepCleanups();

/** The sheets one read saw exceljs set aside. */
export class SpooledSheets {
  private readonly paths = new Set<string>();

  add(path: string): void {
    this.paths.add(path);
  }

  /** Closes and deletes what is left of them (those exceljs cleaned up are gone already). */
  removeAll(): void {
    for (const path of this.paths) {
      const cleanup = pending.get(path);
      if (cleanup) cleanup();
      else rmSync(path, { force: true });
    }
    this.paths.clear();
  }
}
