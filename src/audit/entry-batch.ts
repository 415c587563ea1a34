/**
 * The batch an audit entry is about, kept beside the entry when it is written
 * (audit_log.batch_id) so that the console's audit page finds a batch's
 * entries by index. One rule, the same as migration 18 (PostgreSQL 13) applied
 * to the entries written before it: a row of the batch ("B line 2"), its
 * preview ("batch B (file)"), an entry whose details name it (the file taken in
 * as it), or an entry whose subject is a batch id itself (approved, rejected).
 * Not part of the hash: it is derived from what is. Pure.
 */
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

/** The batch an entry is about when its subject says it (most do: a row's entries); undefined when its details must be read. */
export function subjectBatch(subject: string): string | undefined {
  const line = subject.indexOf(' line ');
  if (line >= 0) return subject.slice(0, line);
  if (subject.startsWith('batch ')) {
    const end = subject.indexOf(' ', 6);
    if (end >= 0) return subject.slice(6, end);
  }
  return undefined;
}

export function entryBatch(subject: string, details: string): string | null {
  const bySubject = subjectBatch(subject);
  if (bySubject !== undefined) return bySubject;
  if (details.includes('"batch"')) {
    try {
      const batch = (JSON.parse(details) as { batch?: unknown }).batch;
      if (typeof batch === 'string') return batch;
    } catch {
      // Not JSON: an entry edited by hand; the chain's check names it.
    }
  }
  return ID.test(subject) ? subject : null;
}

/** Adds an entry to counts by action and by the batch it is about (what the console's kept verification shows). */
export function countEntry(counts: { actions: Record<string, number>; batches: Record<string, number> }, entry: { action: string; subject: string; details: string }): void {
  counts.actions[entry.action] = (counts.actions[entry.action] ?? 0) + 1;
  const batch = entryBatch(entry.subject, entry.details);
  if (batch !== null) counts.batches[batch] = (counts.batches[batch] ?? 0) + 1;
}
