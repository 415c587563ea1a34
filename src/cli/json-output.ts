/**
 * The `--json` output of each command that reports something: one JSON
 * document on standard output, of the shape below, so that scripts never
 * parse text. A shape only grows (a new key); a key is never renamed or given
 * another type. Each document is checked against its schema as it is printed,
 * and docs/cli.md describes each from these schemas. Money is in minor units,
 * as integer strings, keyed by currency (ISO 4217).
 */
import { z } from 'zod';
import type { IntakeOutcome } from '../engine/intake.js';
import type { RunReport } from '../engine/run.js';

const minorByCurrency = z.record(z.string(), z.string().regex(/^-?\d+$/)).describe('currency to an amount in minor units (an integer string)');
const count = z.number().int().nonnegative();

const intakeOutcome = z.object({
  kind: z.enum(['accepted', 'rejected', 'unreadable', 'duplicate', 'not_read', 'waiting', 'changed', 'gone']).describe('what became of the file'),
  file: z.string().describe('the file: its path in the workspace once taken in, else its name in the inbox'),
  batch: z.string().nullable().describe('the batch it became, if any'),
  reason: z.string().nullable().describe('why it was refused, put back or left, if so'),
  report_file: z.string().nullable().describe('the report or note written about it, if any'),
});

const batchSummary = z.object({
  batch: z.string(),
  file: z.string().describe('the batch file\'s name'),
  status: z.string(),
  rows: count,
  by_state: z.record(z.string(), count).describe('state to rows in it'),
  by_reason: z.record(z.string(), count).describe('reason code to rows paybatch refused or held for it'),
  need_person: count.describe('rows that need a person (exit 3)'),
  approval: z.string().nullable().describe('where its approval stands; null when approvals were off at intake'),
  approval_reason: z.string().nullable(),
  audit_chain_head: z.object({ seq: count, hash: z.string() }).describe('the audit trail\'s head when the summary was made (see audit verify --head)'),
  funded: minorByCurrency.describe('input currency to the amount funded, minor units'),
  paid_out: minorByCurrency.describe('output currency to the amount paid out, minor units'),
  unsettled: count.describe('rows still in flight'),
  received_at: z.string().describe('ISO 8601'),
  settled_at: z.string().nullable().describe('ISO 8601, when every row was final'),
  results_file: z.string(),
});

/** Each command's shape, by its path after `paybatch`. */
export const JSON_SHAPES = {
  run: z.object({
    intake: z.array(intakeOutcome).describe('each file of the inbox looked at'),
    batches: z.array(batchSummary).describe('each batch worked on'),
    service_trouble: z.string().nullable().describe('why the payout service stopped answering (exit 69); null otherwise'),
  }),
  cancel: z.object({
    batch: z.string(),
    rows: z.array(z.object({
      line: count.nullable().describe('the row\'s line in the batch file'),
      external_id: z.string(),
      state_before: z.string(),
      state_after: z.string().nullable(),
      cancelled: z.boolean(),
      reason: z.string().describe('why not, when not cancelled'),
    })).describe('each row that matched; none: exit 1'),
  }),
  approve: z.object({
    batch: z.string(),
    approved_by: z.string(),
    rows: count,
    totals: minorByCurrency.describe('output currency to the total to pay out, minor units'),
    ceiling: minorByCurrency.describe('input currency to the most that may be funded, minor units'),
    file_sha256: z.string(),
    expires_at: z.string().describe('ISO 8601: the approval is void after this'),
    verdict: z.object({
      kind: z.enum(['not_needed', 'approved', 'waiting', 'ended']),
      approvers: z.array(z.string()).optional().describe('with approved: who approved'),
      reason: z.string().optional().describe('with waiting or ended: why'),
    }).describe('where the batch stands after this approval'),
  }),
  reject: z.object({ batch: z.string(), rejected_by: z.string(), reason: z.string() }),
  retry: z.object({
    batch: z.string(),
    reasons: z.array(z.string()).describe('the reason codes retried'),
    rows: count.describe('rows to pay again'),
    file: z.string().describe('the child batch written to the inbox'),
  }),
  resubmit: z.object({ file: z.string().describe('the file as put in the inbox') }),
  'webhooks list': z.object({
    webhooks: z.array(z.object({ id: z.string(), event_type: z.string(), uri: z.string() })).describe('by event type'),
  }),
  'audit verify': z.object({
    intact: z.boolean().describe('false: exit 1'),
    entries: count.describe('entries checked'),
    head: z.object({ seq: count, hash: z.string() }).nullable().describe('the chain\'s head; null for an empty trail or a broken one'),
    broken: z.object({ seq: count, message: z.string() }).nullable().describe('the first entry edited, deleted, inserted or reordered'),
    head_given: z.object({ seq: count, hash: z.string(), found: z.boolean() }).nullable().describe('with --head: whether that head is in the chain'),
  }),
  'keys generate': z.object({
    name: z.string(),
    private_key_file: z.string().describe('keep it to yourself: it signs approvals'),
    public_key_file: z.string(),
    public_key: z.string().describe('PEM, for approvals.people.NAME.public_key'),
  }),
  backup: z.object({
    database: z.string().describe('the state database copied'),
    file: z.string().describe('the copy'),
    bytes: count,
  }),
} as const;

export type JsonCommand = keyof typeof JSON_SHAPES;
export type JsonOf<C extends JsonCommand> = z.input<(typeof JSON_SHAPES)[C]>;

/** The `--json` option, the same words everywhere. */
export { JSON_FLAG } from './json-flag.js';

/** Writes the command's document, checked against its shape: a change of shape is caught as a bug, not shipped. */
export function printJson<C extends JsonCommand>(command: C, value: JsonOf<C>): void {
  const checked: unknown = JSON_SHAPES[command].parse(value);
  process.stdout.write(`${JSON.stringify(checked, null, 2)}\n`);
}

function intakeJson(outcome: IntakeOutcome): z.input<typeof intakeOutcome> {
  const none = { batch: null, reason: null, report_file: null };
  switch (outcome.kind) {
    case 'accepted': return { ...none, kind: outcome.kind, file: outcome.file, batch: outcome.batch };
    case 'rejected': return { kind: outcome.kind, file: outcome.file, batch: outcome.batch, reason: `${outcome.report.invalid} invalid rows, nothing sent`, report_file: outcome.reportFile };
    case 'unreadable': return { kind: outcome.kind, file: outcome.file, batch: outcome.batch, reason: outcome.error.message, report_file: outcome.reportFile };
    case 'duplicate': return { kind: outcome.kind, file: outcome.file, batch: null, reason: `same content as batch ${outcome.earlier.id}`, report_file: outcome.noteFile };
    case 'not_read': return { kind: outcome.kind, file: outcome.file, batch: null, reason: outcome.reason, report_file: outcome.reportFile };
    case 'waiting': return { ...none, kind: outcome.kind, file: outcome.name, reason: outcome.reason };
    case 'changed': return { ...none, kind: outcome.kind, file: outcome.name, batch: outcome.batch, reason: outcome.reason };
    case 'gone': return { ...none, kind: outcome.kind, file: outcome.name };
  }
}

export function runJson(report: RunReport): JsonOf<'run'> {
  return { intake: report.intake.map(intakeJson), batches: report.batches, service_trouble: report.serviceTrouble };
}
