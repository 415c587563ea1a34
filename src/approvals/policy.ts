/**
 * The approval policy from the configuration: people with their roles and
 * public keys (read and checked now, so that a bad key stops the start), the
 * rules in minor units, and the inbox's submitter. A policy that could never
 * approve anything is refused too.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { currencyDecimals, parseMajorAmount } from '../validate/money.js';
import { publicKeyFrom } from './keys.js';
import type { ApprovalPolicy, Person, Role, Rule } from './verify.js';
import { canApprove } from './verify.js';

export interface ApprovalsSettings {
  people: Record<string, { role: Role; public_key?: string; public_key_file?: string }>;
  inbox_submitter: string;
  rules: { approvers: number; currency?: string; total_at_least?: string; row_at_least?: string }[];
  expires_after_ms: number;
}

function minor(amount: string, currency: string, what: string): bigint | string {
  const decimals = currencyDecimals(currency);
  if (decimals === undefined) return `${currency} is not an ISO 4217 currency code`;
  const parsed = parseMajorAmount(amount, decimals);
  return parsed.ok ? parsed.minor : `${what} "${amount}": ${parsed.message}`;
}

/** The policy, or why the configuration cannot make one. */
export function approvalPolicy(settings: ApprovalsSettings, configFolder: string): ApprovalPolicy | string {
  const people = new Map<string, Person>();
  for (const [name, person] of Object.entries(settings.people)) {
    if (Boolean(person.public_key) === Boolean(person.public_key_file)) return `people.${name}: give exactly one of public_key and public_key_file`;
    let pem = person.public_key ?? '';
    if (person.public_key_file) {
      const path = isAbsolute(person.public_key_file) ? person.public_key_file : join(configFolder, person.public_key_file);
      try {
        pem = readFileSync(path, 'utf8');
      } catch (error) {
        return `people.${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
      }
    }
    const key = publicKeyFrom(pem);
    if (typeof key === 'string') return `people.${name}: the public key is ${key}`;
    people.set(name, { name, role: person.role, publicKey: key });
  }
  const submitter = people.get(settings.inbox_submitter);
  if (!submitter || submitter.role !== 'submitter') return `inbox_submitter "${settings.inbox_submitter}" must be a person of the policy with the role submitter (who can never approve)`;
  const rules: Rule[] = [];
  for (const [index, rule] of settings.rules.entries()) {
    if ((rule.total_at_least || rule.row_at_least) && !rule.currency) return `rules[${index}]: total_at_least and row_at_least need a currency`;
    const parsed: Rule = { approvers: rule.approvers, currency: rule.currency };
    if (rule.currency && rule.total_at_least) {
      const value = minor(rule.total_at_least, rule.currency, 'total_at_least');
      if (typeof value === 'string') return `rules[${index}]: ${value}`;
      parsed.totalAtLeast = value;
    }
    if (rule.currency && rule.row_at_least) {
      const value = minor(rule.row_at_least, rule.currency, 'row_at_least');
      if (typeof value === 'string') return `rules[${index}]: ${value}`;
      parsed.rowAtLeast = value;
    }
    rules.push(parsed);
  }
  const approvers = [...people.values()].filter((p) => canApprove(p, settings.inbox_submitter)).length;
  const most = Math.max(0, ...rules.map((r) => r.approvers));
  if (approvers < most) return `a rule needs ${most} approvers, and the policy has ${approvers} people who may approve`;
  return { people, inboxSubmitter: settings.inbox_submitter, rules, expiresAfterMs: settings.expires_after_ms };
}
