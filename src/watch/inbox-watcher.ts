/**
 * Watches the inbox (chokidar) and hands over each batch file as it appears
 * (whether it is complete, the intake decides: see workspace/arrival.ts), or as
 * its completion marker or manifest appears or is written again. A batch file
 * that changes is handed to `onChange` (the daemon looks again at once at a file
 * it waits for). A file written as NAME.csv.part or
 * NAME.csv.tmp arrives when renamed to NAME.csv (the rename is atomic). Files
 * already there at start count as arriving at start. Hidden files and files not
 * ending in .csv are left alone, with one log line each. Symbolic links are not
 * followed.
 */
import { basename, dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { companionOf, notABatchFile } from '../workspace/arrival.js';

import type { FSWatcher } from 'chokidar';
import { watch } from 'chokidar';

export interface InboxWatcherOptions {
  inbox: string;
  /** A complete batch file arrived (full path). */
  onFile: (path: string) => void;
  /** A batch file already seen changed (written to again). */
  onChange?: (path: string) => void;
  log: (event: string, fields: Record<string, unknown>) => void;
}

export class InboxWatcher {
  private watcher: FSWatcher | null = null;
  /** Names already logged as ignored: one line each, not one per change. */
  private readonly ignored = new Set<string>();

  constructor(private readonly options: InboxWatcherOptions) {}

  /** Resolves once the files present at start have been found (they are handed over when stable). */
  async start(): Promise<void> {
    const { inbox } = this.options;
    const watcher = watch(inbox, {
      depth: 0,
      ignoreInitial: false,
      followSymlinks: false,
    });
    this.watcher = watcher;
    watcher.on('add', (path) => this.arrived(path));
    watcher.on('change', (path) => this.changed(path));
    watcher.on('error', (error) => this.options.log('inbox_watch_error', { reason: (error as Error).message }));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  private arrived(path: string): void {
    const name = basename(path);
    // A completion marker or a manifest: its batch file may be complete now.
    const companion = companionOf(name);
    if (companion !== null) {
      const data = join(dirname(path), companion);
      if (existsSync(data)) this.options.onFile(data);
      return;
    }
    const why = notABatchFile(name);
    if (why === null) {
      this.options.onFile(path);
      return;
    }
    if (this.ignored.has(name)) return;
    this.ignored.add(name);
    this.options.log('inbox_file_ignored', { file: name, reason: why });
  }

  private changed(path: string): void {
    const name = basename(path);
    // A marker written again (newer than the file now): as if it arrived.
    if (companionOf(name) !== null) return this.arrived(path);
    if (notABatchFile(name) === null) this.options.onChange?.(path);
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    this.watcher = null;
  }
}
