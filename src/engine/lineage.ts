/**
 * A row's lineage: the original row and every correction of it (and of its
 * corrections), in order, with where each ended; and the check that one
 * original was paid at most once across all of them. Read from the store by
 * the links each correction row keeps (original_batch, original_line).
 */
import type { IntakeStore, PipelineRow, PipelineStore } from '../store/port.js';
import { isNeverSentEnd } from '../payout-states.js';
import type { Phase } from '../payout-states.js';

export interface LineageStep {
  batch: string;
  line: number;
  external_id: string;
  /** 0 for the original, 1 for its correction, 2 for a correction of that, ... */
  generation: number;
  phase: Phase;
  state: string | null;
  outcome: string | null;
  /** True when this row's payout was paid, or was funded and could still be paid. */
  paysOrMayPay: boolean;
}

export interface Lineage {
  root: { batch: string; line: number; external_id: string };
  steps: LineageStep[];
  /** How many of its rows paid, or could still pay: more than one is a difference. */
  paying: number;
}

type LineageStore = Pick<PipelineStore, 'row'> & Pick<IntakeStore, 'correctionsOf'>;

/** Paid, or funded and not ended: money that reached, or may reach, the recipient. */
function paysOrMayPay(row: Pick<PipelineRow, 'phase' | 'state' | 'funded_at'>): boolean {
  if (row.state === 'paid') return true;
  if (row.phase === 'final' || isNeverSentEnd(row.phase)) return false;
  return row.funded_at !== null;
}

/** The whole lineage of the row (batch, line): back to its original, then forward through every correction. */
export async function lineageOf(store: LineageStore, batch: string, line: number): Promise<Lineage | null> {
  let row = await store.row(batch, line);
  if (!row) return null;
  // Back to the original: a chain of corrections is short (one per failed attempt), and a loop is cut.
  const seen = new Set<string>([`${row.batch_id}:${row.line}`]);
  while (row.original_batch && row.original_line) {
    const up: PipelineRow | undefined = await store.row(row.original_batch, row.original_line);
    if (!up || seen.has(`${up.batch_id}:${up.line}`)) break;
    seen.add(`${up.batch_id}:${up.line}`);
    row = up;
  }
  const root = row;
  const steps: LineageStep[] = [];
  const visit = async (current: PipelineRow, generation: number, visited: Set<string>): Promise<void> => {
    const key = `${current.batch_id}:${current.line}`;
    if (visited.has(key)) return;
    visited.add(key);
    steps.push({
      batch: current.batch_id, line: current.line, external_id: current.external_id, generation,
      phase: current.phase, state: current.state, outcome: current.outcome, paysOrMayPay: paysOrMayPay(current),
    });
    for (const child of await store.correctionsOf(current.batch_id, current.line)) {
      const full = await store.row(child.batch_id, child.line);
      if (full) await visit(full, generation + 1, visited);
    }
  };
  await visit(root, 0, new Set());
  return { root: { batch: root.batch_id, line: root.line, external_id: root.external_id }, steps, paying: steps.filter((s) => s.paysOrMayPay).length };
}

/** The lineages of rows that are, or have, corrections: one per original, whichever of its rows is given. */
export async function lineagesOf(store: LineageStore, rows: Iterable<{ batch_id: string; line: number; original_batch?: string | null }>, hasCorrections: (batch: string, line: number) => Promise<boolean>): Promise<Lineage[]> {
  const byRoot = new Map<string, Lineage>();
  for (const r of rows) {
    if (!r.original_batch && !(await hasCorrections(r.batch_id, r.line))) continue;
    const lineage = await lineageOf(store, r.batch_id, r.line);
    if (lineage) byRoot.set(`${lineage.root.batch}:${lineage.root.line}`, lineage);
  }
  return [...byRoot.values()];
}
