/**
 * Watches the inbox (chokidar) and hands over each batch file once it is
 * complete: its size unchanged for `stableMs`, or written as NAME.csv.part or
 * NAME.csv.tmp and renamed to NAME.csv (the rename is then the arrival). Files
 * already there at start count as arriving at start. Hidden files and files not
 * ending in .csv are left alone, with one log line each. Symbolic links are not
 * followed.
 */
import { basename } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { watch } from 'chokidar';

export interface InboxWatcherOptions {
  inbox: string;
  stableMs: number;
  /** A complete batch file arrived (full path). */
  onFile: (path: string) => void;
  log: (event: string, fields: Record<string, unknown>) => void;
}

/** Why a name in the inbox is not a batch file, or null when it is one. */
export function notABatchFile(name: string): string | null {
  if (name.startsWith('.')) return 'a hidden file';
  if (/\.csv\.(part|tmp)$/i.test(name)) return 'still being written (taken once renamed to .csv)';
  if (!name.toLowerCase().endsWith('.csv')) return 'not a .csv file';
  return null;
}

export class InboxWatcher {
  private watcher: FSWatcher | null = null;
  /** Names already logged as ignored: one line each, not one per change. */
  private readonly ignored = new Set<string>();

  constructor(private readonly options: InboxWatcherOptions) {}

  /** Resolves once the files present at start have been found (they are handed over when stable). */
  async start(): Promise<void> {
    const { inbox, stableMs } = this.options;
    const watcher = watch(inbox, {
      depth: 0,
      ignoreInitial: false,
      followSymlinks: false,
      awaitWriteFinish: { stabilityThreshold: stableMs, pollInterval: Math.max(20, Math.min(250, Math.floor(stableMs / 4))) },
    });
    this.watcher = watcher;
    watcher.on('add', (path) => this.arrived(path));
    watcher.on('error', (error) => this.options.log('inbox_watch_error', { reason: (error as Error).message }));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  private arrived(path: string): void {
    const name = basename(path);
    const why = notABatchFile(name);
    if (why === null) {
      this.options.onFile(path);
      return;
    }
    if (this.ignored.has(name)) return;
    this.ignored.add(name);
    this.options.log('inbox_file_ignored', { file: name, reason: why });
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    this.watcher = null;
  }
}
