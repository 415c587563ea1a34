/**
 * The workspace folder: files move inbox/ → processing/ → archive/ (or failed/),
 * results go to outbox/, and paybatch.db keeps the state. Created on first use,
 * readable by its owner only (it holds account numbers).
 */
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { UnsafePath } from './safe-files.js';
import { join, resolve } from 'node:path';

export const WORKSPACE_FOLDERS = ['inbox', 'processing', 'outbox', 'archive', 'failed'] as const;
export type WorkspaceFolder = (typeof WORKSPACE_FOLDERS)[number];

export interface Workspace {
  home: string;
  folders: Record<WorkspaceFolder, string>;
  database: string;
}

export function openWorkspace(home: string): Workspace {
  const root = resolve(home);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const folders = {} as Record<WorkspaceFolder, string>;
  for (const name of WORKSPACE_FOLDERS) {
    folders[name] = join(root, name);
    mkdirSync(folders[name], { recursive: true, mode: 0o700 });
    // A folder planted as a link elsewhere would take what paybatch writes out of the workspace.
    if (lstatSync(folders[name]).isSymbolicLink()) throw new UnsafePath(`${folders[name]} is a symbolic link: refused, paybatch writes nothing through a link (make it a plain folder)`);
    chmodSync(folders[name], 0o700);
  }
  chmodSync(root, 0o700);
  return { home: root, folders, database: join(root, 'paybatch.db') };
}
