/**
 * Who may do what in the console. People come from two places: those of the
 * approval policy (approvals.people), whose role there gives their console role
 * (a submitter views; an approver views, approves and rejects; an admin also
 * cancels), and console.people (a viewer views, an operator also cancels). Pure.
 */
export type ConsoleRole = 'viewer' | 'operator' | 'approver' | 'admin';
export type ConsoleAction = 'view' | 'cancel' | 'approve';

const ALLOWED: Record<ConsoleRole, readonly ConsoleAction[]> = {
  viewer: ['view'],
  operator: ['view', 'cancel'],
  approver: ['view', 'approve'],
  admin: ['view', 'cancel', 'approve'],
};

export const may = (role: ConsoleRole, action: ConsoleAction): boolean => ALLOWED[role].includes(action);

export interface ConsolePeople {
  approvals: Readonly<Record<string, { role: string }>>;
  console: Readonly<Record<string, { role: 'viewer' | 'operator' }>>;
}

/** A person's console role, or null when they may not sign in. The approval policy wins when a name is in both. */
export function consoleRole(people: ConsolePeople, name: string): ConsoleRole | null {
  const policy = Object.hasOwn(people.approvals, name) ? people.approvals[name] : undefined;
  if (policy?.role === 'approver') return 'approver';
  if (policy?.role === 'admin') return 'admin';
  if (policy) return 'viewer';
  return Object.hasOwn(people.console, name) ? (people.console[name] as { role: 'viewer' | 'operator' }).role : null;
}
