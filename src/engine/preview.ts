/**
 * `paybatch preview BATCH|FILE`: what an approver needs to see before signing.
 * The rows to send and their totals per output currency, the invalid rows with
 * their reasons, the rows refused because an earlier batch used their
 * external_id, the funding estimate and the proposed ceiling per input currency,
 * the corridors the service has switched off right now, the approvers the rules
 * require, and the file's SHA-256. For a file not yet in the inbox it is a dry
 * run: nothing is stored, nothing is sent.
 */
import type { PayoutClient } from '../api/client.js';
import { readerOptions, ruleOptions } from '../batch/batch-options.js';
import { validateFile } from '../batch/validate-file.js';
import type { PayoutRequest } from '../api/payout-request.js';
import type { ApprovalFacts } from '../approvals/facts.js';
import { approvalFacts, proposedCeiling } from '../approvals/facts.js';
import type { ApprovalPolicy } from '../approvals/verify.js';
import { requiredApprovers } from '../approvals/verify.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { warnRowAmountMinor } from '../config/config.js';
import type { Outlier } from '../validate/outliers.js';
import type { PreviewRow } from './preview-rows.js';
import { PreviewRows } from './preview-rows.js';
import type { ApprovalStore, DuplicateStore, IntakeStore, PipelineStore, PossibleDuplicate } from '../store/port.js';
import { duplicatesOfFile, fileEntry } from './duplicate-screen.js';
import type { Issue } from '../validate/issue.js';

export interface Preview {
  subject: string;
  /** This database's identity, which an approval names: approvals copied from another workspace do not verify. */
  deployment: string;
  file_sha256: string;
  status: string;
  rows: { to_send: number; invalid: number; already_used: string[] };
  invalid: Issue[];
  totals: Record<string, string>;
  largest_row: Record<string, string>;
  funding_estimate: Record<string, { minor: string; exact: boolean; rows_without_estimate: number }>;
  proposed_ceiling: Record<string, string | null>;
  /** null where no service was asked (the console reads the store alone). */
  inactive_corridors: { corridor: string; rows: number }[] | null;
  required_approvers: { count: number; because: string[] };
  approvals: { person: string; decision: string; at: string; reason: string | null }[];
  /** Rows paying an account the same amount as a row of an earlier batch, each with that twin (duplicates.ts); who allowed one. */
  possible_duplicates: PreviewDuplicate[];
  expires_at: string | null;
  rows_sha256: string;
  /** The digest of the possible duplicates and their allowances, as signed (approvals/duplicates-digest.ts); null: none. */
  duplicates_sha256?: string | null;
  /** Every row to send, in line order (the text lists them a page at a time; --json has them all). */
  payees: PreviewRow[];
  /** Rows far above the batch's usual amounts, or over batch.warn_row_amount: to check before signing. */
  outliers: Outlier[];
}

export interface PreviewDuplicate {
  line: number;
  external_id: string | null;
  /** hold or warn */
  action: string;
  detail: string;
  /** `same_file`: an earlier line of this very file (its batch, or '' for a file not taken in yet). */
  twin: { batch: string; line: number; external_id: string | null; state: string; date: string; same_file: boolean };
  allowed_by: string | null;
  allowed_reason: string | null;
}

const previewDuplicate = (own: string) => (d: Omit<PossibleDuplicate, 'batch_id'>): PreviewDuplicate => ({
  line: d.line, external_id: d.external_id, action: d.action, detail: d.detail,
  twin: { batch: d.twin.batch_id, line: d.twin.line, external_id: d.twin.external_id, state: d.twin.state ?? d.twin.phase ?? 'unknown', date: d.twin.at, same_file: d.twin.batch_id === own },
  allowed_by: d.allowed_by, allowed_reason: d.allowed_reason,
});

export interface PreviewDeps {
  store: IntakeStore & ApprovalStore & DuplicateStore & Pick<PipelineStore, 'rowBySubmittedExternalId'>;
  /** The service, for the corridors switched off now; null: not asked. */
  client: Pick<PayoutClient, 'listCorridors'> | null;
  config: Config;
  clock: Clock;
}

const INVALID_SHOWN = 50;

async function inactiveCorridors(requests: readonly PayoutRequest[], client: Pick<PayoutClient, 'listCorridors'>): Promise<{ corridor: string; rows: number }[]> {
  const countries = [...new Set(requests.map((r) => r.recipient.country_code as string))];
  const corridors = new Map(await Promise.all(countries.map(async (c) => [c, await client.listCorridors(c)] as const)));
  const inactive = new Map<string, number>();
  for (const r of requests) {
    const key = `${r.type} to ${r.recipient.country_code} from ${r.input_currency_code} to ${r.output_currency_code}`;
    const serving = (corridors.get(r.recipient.country_code as string) ?? []).filter((c) => c.type === r.type && c.input_currency_codes.includes(r.input_currency_code) && c.output_currency_codes.includes(r.output_currency_code));
    if (!serving.some((c) => c.active)) inactive.set(key, (inactive.get(key) ?? 0) + 1);
  }
  return [...inactive.entries()].map(([corridor, rows]) => ({ corridor, rows }));
}

function shape(facts: ApprovalFacts, policy: ApprovalPolicy | undefined, margin: number): Pick<Preview, 'totals' | 'largest_row' | 'funding_estimate' | 'proposed_ceiling' | 'required_approvers' | 'rows_sha256' | 'duplicates_sha256'> {
  const record = (map: ReadonlyMap<string, bigint>): Record<string, string> => Object.fromEntries([...map.entries()].map(([k, v]) => [k, v.toString()]));
  return {
    totals: facts.expected.totals,
    largest_row: record(facts.figures.largestRow),
    funding_estimate: Object.fromEntries([...facts.estimate.entries()].map(([c, e]) => [c, { minor: e.minor.toString(), exact: e.exact, rows_without_estimate: e.unknownRows }])),
    proposed_ceiling: Object.fromEntries([...proposedCeiling(facts, margin).entries()].map(([c, v]) => [c, v === null ? null : v.toString()])),
    required_approvers: policy ? requiredApprovers(policy, facts.figures) : { count: 0, because: ['approvals are off'] },
    rows_sha256: facts.expected.rows_sha256,
    duplicates_sha256: facts.expected.duplicates_sha256 ?? null,
  };
}

export async function previewBatch(batchId: string, deps: PreviewDeps): Promise<Preview | null> {
  const batch = await deps.store.batch(batchId);
  if (!batch) return null;
  const requests: PayoutRequest[] = [];
  const invalid: Issue[] = [];
  const alreadyUsed: string[] = [];
  const listed = new PreviewRows();
  let invalidRows = 0;
  for await (const row of deps.store.rows(batchId)) {
    if (row.phase === 'invalid') {
      invalidRows += 1;
      if (invalid.length < INVALID_SHOWN) invalid.push(...row.errors);
    } else if (row.phase === 'refused' && row.external_id) alreadyUsed.push(row.external_id);
    else if (row.request) {
      requests.push(row.request);
      listed.add(row.line, row.request);
    }
  }
  const duplicates = await deps.store.possibleDuplicates(batchId);
  const facts = await approvalFacts(batch, deps.store.acceptedRows(batchId), deps.config.approvals.estimate_rates, await deps.store.deploymentId(), duplicates);
  return {
    subject: `batch ${batch.id} (${batch.file_name})`,
    deployment: facts.expected.deployment,
    file_sha256: batch.sha256,
    status: `${batch.status}${batch.approval ? `, approval ${batch.approval}${batch.approval_reason ? ` (${batch.approval_reason})` : ''}` : ''}`,
    rows: { to_send: facts.expected.rows, invalid: invalidRows, already_used: alreadyUsed },
    invalid,
    ...shape(facts, deps.config.approvalPolicy, deps.config.approvals.ceiling_margin_percent),
    inactive_corridors: deps.client ? await inactiveCorridors(requests, deps.client) : null,
    approvals: (await deps.store.approvalsOf(batchId)).map((a) => ({ person: a.person, decision: a.decision, at: a.at, reason: a.reason })),
    possible_duplicates: duplicates.map(previewDuplicate(batchId)),
    expires_at: batch.approval_expires_at,
    ...listed.finish(warnRowAmountMinor(deps.config.batch)),
  };
}

/** A dry run of a file not taken in yet: validated, looked at as a batch would be, nothing stored or sent. */
export async function previewFile(file: string, deps: PreviewDeps): Promise<Preview> {
  const requests: { line: number; request: PayoutRequest }[] = [];
  const alreadyUsed: string[] = [];
  const listed = new PreviewRows();
  const report = await validateFile(file, { reader: readerOptions(deps.config.batch), rules: ruleOptions(deps.config.batch, deps.clock), maxReportedIssues: INVALID_SHOWN }, {
    async row(checked) {
      if (!checked.valid) return;
      const request = checked.request();
      if (await deps.store.rowBySubmittedExternalId(request.external_id)) alreadyUsed.push(request.external_id);
      else {
        requests.push({ line: checked.line, request });
        listed.add(checked.line, request);
      }
    },
  });
  async function* accepted(): AsyncIterable<{ line: number; request: PayoutRequest }> {
    yield* requests;
  }
  const duplicates = (await duplicatesOfFile(requests.flatMap((r) => fileEntry(r.line, r.request) ?? []), { store: deps.store, batch: deps.config.batch, now: deps.clock.now() }))
    .map((f) => ({ ...f, allowed_by: null, allowed_reason: null, allowed_at: null }));
  const facts = await approvalFacts({ id: '(not taken in yet)', sha256: report.sha256 }, accepted(), deps.config.approvals.estimate_rates, await deps.store.deploymentId(), duplicates);
  return {
    subject: `file ${file} (a dry run: nothing taken in, nothing sent)`,
    deployment: facts.expected.deployment,
    file_sha256: report.sha256,
    status: 'not taken in',
    rows: { to_send: facts.expected.rows, invalid: report.invalid, already_used: alreadyUsed },
    invalid: report.errors,
    ...shape(facts, deps.config.approvalPolicy, deps.config.approvals.ceiling_margin_percent),
    inactive_corridors: deps.client ? await inactiveCorridors(requests.map((r) => r.request), deps.client) : null,
    approvals: [],
    possible_duplicates: duplicates.map(previewDuplicate('')),
    expires_at: null,
    ...listed.finish(warnRowAmountMinor(deps.config.batch)),
  };
}
