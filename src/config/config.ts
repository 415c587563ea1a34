/**
 * paybatch's configuration: `paybatch.config.json` in the workspace, or the file
 * given with --config. Validated at start; every bad key is named.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { approvalPolicy } from '../approvals/policy.js';
import type { ApprovalPolicy } from '../approvals/verify.js';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { LONGEST_TIMER_MS } from '../api/exchange.js';
import { WINDOW_GUARD_MS } from '../api/rate-bucket.js';
import { describeIssues, readJsonFile } from './json.js';
import { notificationsSchema } from './notifications.js';
import { processSchema } from './process.js';
import { engineSchema } from './engine.js';
import { FIELDS, SENDER_FIELDS } from '../validate/fields.js';
import { currencyDecimals, parseMajorAmount } from '../validate/money.js';
import { cronProblem, timeZoneProblem } from '../cron.js';

const positive = z.number().int().positive();

/** Per output currency, an amount in major units ("50000.00"): ISO 4217 codes, at most the currency's decimals. */
const majorAmounts = () => z.record(z.string(), z.string()).default({}).superRefine((limits, ctx) => {
  for (const [currency, amount] of Object.entries(limits)) {
    const decimals = currencyDecimals(currency);
    if (decimals === undefined) ctx.addIssue({ code: 'custom', path: [currency], message: 'not an ISO 4217 currency code' });
    else if (!parseMajorAmount(amount, decimals).ok) ctx.addIssue({ code: 'custom', path: [currency], message: `"${amount}" is not a positive amount with at most ${decimals} decimals` });
  }
});
/** A delay paybatch waits for with a timer: Node's timers wait 1 ms for anything longer than 2^31 − 1 ms. */
const delayMs = positive.max(LONGEST_TIMER_MS, `at most ${LONGEST_TIMER_MS} ms (about 24.8 days), the longest delay a timer waits for`);

const iso20022Schema = z.strictObject({
  /**
   * Per debtor (by its Dbtr/Id's identification, or else its Dbtr/Nm): the sender
   * fields a payout needs and a pain.001 does not carry (sender_external_id,
   * sender_birth_date, sender_phone_number, ...), by batch column name.
   */
  senders: z.record(z.string().min(1), z.strictObject(Object.fromEntries(SENDER_FIELDS.map((field) => [field, z.string().min(1).optional()])))).default({}),
  /** The input currency when a PmtInf's DbtrAcct/Ccy does not say. */
  input_currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 currency code').optional(),
  /** Take Amt/EqvtAmt (an amount in the debtor's currency) as the amount to pay; refused by default. */
  allow_equivalent_amount: z.boolean().default(false),
});

const batchSchema = z.strictObject({
  /** `auto` detects comma, semicolon or tab from the header line. */
  delimiter: z.enum(['auto', ',', ';', 'tab']).default('auto'),
  decimal_separator: z.enum(['.', ',']).default('.'),
  sheet: z.string().min(1).optional(), // an .xlsx file's sheet, by name; absent: its first visible sheet
  /** The file's own header (any case or spacing) to a batch column. */
  column_mapping: z.record(z.string().min(1), z.enum(FIELDS, { message: 'must be a batch column name, such as recipient_iban' })).default({}),
  max_file_bytes: positive.default(1024 * 1024 * 1024),
  /** An .xlsx part may unpack to at most this many times its packed size (past 1 MiB): more is a zip bomb. */
  max_compression_ratio: positive.default(50),
  /** The memory an .xlsx file's shared strings (its text cells' text) may take. */
  max_shared_strings_bytes: positive.default(32 * 1024 * 1024),
  /** Characters in the fields of one row (delimiters not counted), the header included. */
  max_row_characters: positive.default(64 * 1024),
  max_columns: positive.default(200),
  /** Largest amount one row may pay, per output currency, in major units ("50000.00"). */
  max_row_amount: majorAmounts(),
  /**
   * A row over this amount, per output currency, in major units ({"GBP": "50000.00"}), is warned of by validate, preview
   * and the approval page before anyone signs; it is still sent. A row over 10 times its currency's median in the batch is too.
   */
  warn_row_amount: majorAmounts(),
  /** How many errors and warnings a report lists in detail; all are counted. */
  max_reported_issues: positive.default(1_000),
  /** reject_file: a file with any invalid row is not sent at all; skip_invalid: its valid rows are. */
  invalid_rows: z.enum(['reject_file', 'skip_invalid']).default('reject_file'),
  /**
   * How far back an earlier row paying the same recipient account the same amount in the same currency makes a row a
   * possible duplicate: days ("30d") or hours ("12h"); `off` looks for none (docs/operations.md, Possible duplicates).
   */
  duplicate_window: z.union([z.literal('off'), z.string().regex(/^[1-9]\d{0,4}[dh]$/, 'a number of days ("30d") or hours ("12h"), or off')]).default('30d'),
  /**
   * A possible duplicate whose earlier twin is paid: hold (not sent until paybatch allow), warn (sent, listed) or
   * allow (sent). One whose twin is still in flight is held whatever this says.
   */
  on_duplicate: z.enum(['hold', 'warn', 'allow']).default('hold'),
  /**
   * Bytes of a batch's fingerprints for the rules across rows kept in memory before a scratch file takes the rest
   * (docs/batch-files.md); 0 goes to the scratch file at once.
   */
  scratch_after_bytes: z.number().int().nonnegative().default(2 * 1024 * 1024),
  /** A CSV file or pain.001 of this many bytes or more is checked on every core; smaller ones on one thread (docs/performance.md). */
  parallel_min_bytes: z.number().int().nonnegative().default(4 * 1024 * 1024),
  /** ISO 20022 pain.001 files (.xml): what they do not carry (docs/iso20022.md). */
  iso20022: iso20022Schema.default(() => ({ senders: {}, allow_equivalent_amount: false })),
});

/** One request rate the service publishes: `requests` per second or per minute. */
const rateLimitSchema = z.strictObject({
  requests: positive.max(100_000),
  per: z.enum(['second', 'minute']).default('second'),
});

/** The request rates the service publishes; a Retry-After the service sends is obeyed on top. */
const rateLimitsSchema = z.strictObject({
  /** Every call, whatever its endpoint. */
  overall: rateLimitSchema.optional(),
  /** POST /transactions. */
  create: rateLimitSchema.optional(),
  /** POST /transactions/{id}/fund. */
  fund: rateLimitSchema.optional(),
  /** GET /transactions/{id}. */
  read: rateLimitSchema.optional(),
  /** GET /transactions?external_id= (finding a create whose answer was lost [D7]). */
  lookup: rateLimitSchema.optional(),
  /** DELETE /transactions/{id}. */
  cancel: rateLimitSchema.optional(),
  /**
   * Added to each window before it is divided among its requests: room for calls sent a little late and reaching the
   * service unevenly (docs/operations.md). Raise it for a service far away on the network; each limit is then reached
   * at window / (window + margin).
   */
  margin_ms: z.number().int().min(0).max(10_000).default(WINDOW_GUARD_MS),
});

const serviceSchema = z.strictObject({
  /** Includes any version prefix [D1]. Absent: paybatch starts the sandbox in-process (the embedded default). */
  base_url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).optional(),
  api_key: z.string().min(1).optional(),
  api_secret: z.string().min(1).optional(),
  /** A file holding the secret (a mounted secret), read at start. */
  api_secret_file: z.string().min(1).optional(),
  timeout_ms: delayMs.default(15_000),
  max_answer_bytes: positive.default(4 * 1024 * 1024),
  retry: z.strictObject({ base_ms: delayMs.default(250), cap_ms: delayMs.default(30_000), attempts: positive.max(20).default(6) }).default(() => ({ base_ms: 250, cap_ms: 30_000, attempts: 6 })),
  /** Request rates never exceeded in any window, by all workers together (docs/operations.md); each absent: not limited. */
  rate_limits: rateLimitsSchema.default(() => ({ margin_ms: WINDOW_GUARD_MS })),
});

/** A cron expression read in a time zone (IANA name), checked at load. */
const scheduleSchema = z.strictObject({
  cron: z.string().min(1),
  time_zone: z.string().min(1).default('UTC'),
}).superRefine((schedule, ctx) => {
  const problem = cronProblem(schedule.cron, schedule.time_zone);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** When a file in the inbox is complete (see src/workspace/arrival.ts), for `run` and `watch` alike. */
const intakeSchema = z.strictObject({
  /** Size and modification time unchanged this long, well above a network share's stalls; the same again after it is taken, before anything is sent. */
  stable_ms: delayMs.default(15_000),
  /** NAME.csv.done (or NAME.done): off (ignored), optional (its presence says the file is whole), required (nothing is taken without one). */
  marker: z.enum(['off', 'optional', 'required']).default('optional'),
  /** NAME.csv.manifest.json (or NAME.manifest.json) with control totals: checked when present (optional), required, or ignored (off). */
  manifest: z.enum(['off', 'optional', 'required']).default('optional'),
});

const watchSchema = z.strictObject({
  /** The older name of intake.stable_ms, for watch only; intake.stable_ms when absent. */
  stable_ms: delayMs.optional(),
  /** Where the webhook receiver listens: loopback unless told otherwise. */
  listen: z.strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(8787),
  }).default(() => ({ host: '127.0.0.1', port: 8787 })),
  /** The address registered with the service [D13] and signed over [D3]; default http://HOST:PORT/webhooks. */
  public_url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).optional(),
  /** Real deliveries are a transaction object, a few KiB: far less than this. */
  max_body_bytes: positive.default(64 * 1024),
  /** Deliveries whose body is being read at once; more answer 503 at once, so memory stays bounded under many slow clients. */
  max_deliveries_in_flight: positive.default(32),
  /** Open connections at most; more are refused by the listener. */
  max_connections: positive.default(1024),
  /** A delivery whose body takes longer than this to arrive is dropped (a slow-drip sender). */
  body_timeout_ms: delayMs.default(10_000),
  /** How often the result files of open batches are rewritten. */
  results_every_ms: delayMs.default(10_000),
  schedules: z.strictObject({
    /** When set, dropped files wait for this time instead of being taken at once (the nightly run). */
    intake: scheduleSchema.optional(),
    /** When the daily reconciliation is written. */
    reconcile: scheduleSchema.optional(),
  }).default({}),
});

const reportsSchema = z.strictObject({
  /** The time zone `--date` days are read in. */
  time_zone: z.string().min(1).default('UTC').refine((zone) => timeZoneProblem(zone) === null, 'not an IANA time zone (such as Europe/London)'),
  /** A funded row not final after this many days is listed among the exceptions. */
  in_flight_days: positive.default(3),
  /** Also write the final results as a workbook, BATCH.results.xlsx, beside BATCH.results.csv (which is always written). */
  results_xlsx: z.boolean().default(false),
  /**
   * The service's ledger of debits and credits, when it offers one (the sandbox does:
   * http://HOST:PORT/_sandbox/ledger). The embedded sandbox's is used without this.
   */
  service_ledger_url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).optional(),
});

const personSchema = z.strictObject({
  role: z.enum(['submitter', 'approver', 'admin']),
  /** The person's Ed25519 public key, PEM (what `paybatch keys generate` writes to NAME.pub). */
  public_key: z.string().min(1).optional(),
  /** Or a file holding it, relative to this configuration file. */
  public_key_file: z.string().min(1).optional(),
});

/** Four-eyes approval before money moves (src/approvals). Off unless enabled. */
const approvalsSchema = z.strictObject({
  enabled: z.boolean().default(false),
  people: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, 'a name of letters, digits, dots, dashes, underscores'), personSchema).default({}),
  /** Who submits the files dropped in the inbox: a person with the role submitter, who can never approve. */
  inbox_submitter: z.string().default('inbox'),
  /** Approvers needed: for every batch, or once a currency's total (or its largest row) reaches a figure in major units. */
  rules: z.array(z.strictObject({
    approvers: positive.max(10),
    currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code').optional(),
    total_at_least: z.string().optional(),
    row_at_least: z.string().optional(),
  })).default([{ approvers: 1 }]),
  /** An approval request expires this long after the file was taken in; the batch then ends, nothing sent. */
  expires_after_ms: positive.default(24 * 3_600_000),
  /** Output units per input unit ("USD/GBP": "0.79"), to estimate the funding of rows paid in another currency. */
  estimate_rates: z.record(z.string().regex(/^[A-Z]{3}\/[A-Z]{3}$/, 'INPUT/OUTPUT, such as USD/GBP'), z.string().regex(/^\d+(\.\d+)?$/, 'a plain decimal rate')).default({}),
  /** The ceiling proposed for approval: the funding estimate plus this margin, in percent. */
  ceiling_margin_percent: z.number().min(0).max(100).default(3),
});

/** The operations console (src/console): served by `paybatch watch` when enabled, and by `paybatch console`. */
const consoleSchema = z.strictObject({
  /** Served by `paybatch watch` on its own listener. */
  enabled: z.boolean().default(false),
  listen: z.strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(8788),
  }).default(() => ({ host: '127.0.0.1', port: 8788 })),
  /** A signed-in session lasts this long. */
  session_ms: positive.default(12 * 3_600_000),
  /** A one-time sign-in code from `paybatch console login NAME` lasts this long. */
  code_ms: positive.default(15 * 60_000),
  /**
   * A file holding the secret the console's CSRF tokens are made with (32 characters or more):
   * the same on every worker behind one address. Without it each process makes its own.
   */
  cookie_secret_file: z.string().min(1).optional(),
  /** The console is served over HTTPS (by a proxy in front): its cookies are marked Secure. */
  secure_cookies: z.boolean().default(false),
  /**
   * One proxy stands in front and adds the client's address to X-Forwarded-For:
   * sign-in limits count by that (its last entry). Off: by the connection's address, the header ignored.
   */
  trust_proxy: z.boolean().default(false),
  /** Live streams (/live) one session may hold open at once; more are refused (429). */
  live_streams_per_session: positive.max(50).default(4),
  /**
   * People who sign in besides those of approvals.people: a viewer reads, an
   * operator also cancels rows. Approvers are those of the approval policy, with their keys.
   */
  people: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, 'a name of letters, digits, dots, dashes, underscores'), z.strictObject({ role: z.enum(['viewer', 'operator']) })).default({}),
});

/** store.unrecorded_file_ms's default: ten minutes (also SharedWork's, for a worker joined without the configuration). */
export const UNRECORDED_FILE_MS = 10 * 60_000;

/** Where paybatch keeps its state: SQLite in the workspace (the default), or PostgreSQL shared by several workers. */
const storeSchema = z.strictObject({
  /** postgres://USER[:PASSWORD]@HOST:PORT/DATABASE; PAYBATCH_DATABASE_URL overrides it. Unset: SQLite in the workspace. */
  url: z.string().regex(/^postgres(ql)?:\/\/./, 'a postgres:// or postgresql:// URL').optional(),
  /** This worker's name among those sharing the database (PAYBATCH_WORKER overrides it); default the host name. */
  worker: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, dots, dashes, underscores').optional(),
  /** A worker not heard of for this long is taken for dead: its rows, files and call slots go to the others. */
  worker_lease_ms: delayMs.min(3_000).default(30_000),
  /** A row or call slot this worker holds but does not use (its release was lost with a connection) is freed after this long. */
  idle_claim_ms: delayMs.min(1_000).default(60_000),
  /**
   * A file claimed from an inbox (in processing/) that no batch records after this long is taken for one a worker died
   * claiming (between the claim and the record, a moment), and is put back in the inbox. A live worker records its batch
   * once the file is hashed: seconds, even for the largest file.
   */
  unrecorded_file_ms: delayMs.min(10_000).default(UNRECORDED_FILE_MS),
  /** Connections each worker keeps to PostgreSQL. */
  pool_size: positive.max(100).default(10),
  /**
   * PostgreSQL: the statements paybatch runs most are prepared once per connection and reused, not parsed again on
   * every call (still planned for their values each time). false for a connection pooler that cannot keep them
   * (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
   */
  prepared_statements: z.boolean().default(true),
  /** SQLite: group commits in a second that move checkpoints to a thread of their own (lower: it starts on a slow machine). */
  checkpoint_thread_groups_per_second: positive.max(100_000).default(100),
});

export const configSchema = z.strictObject({
  batch: batchSchema.default(() => batchSchema.parse({})),
  intake: intakeSchema.default(() => intakeSchema.parse({})),
  service: serviceSchema.default(() => serviceSchema.parse({})),
  engine: engineSchema.default(() => engineSchema.parse({})),
  watch: watchSchema.default(() => watchSchema.parse({})),
  reports: reportsSchema.default(() => reportsSchema.parse({})),
  approvals: approvalsSchema.default(() => approvalsSchema.parse({})),
  store: storeSchema.default(() => storeSchema.parse({})),
  console: consoleSchema.default(() => consoleSchema.parse({})),
  /** Who is told about what (src/notify): none by default. */
  notifications: notificationsSchema.default(() => notificationsSchema.parse({})),
  /** How V8 sizes the heap of a command (src/config/process.ts): set once as it starts. */
  process: processSchema.default(() => processSchema.parse({})),
});

/** The configuration, with the approval policy built from it when approvals are on (keys read and checked). */
export type Config = z.infer<typeof configSchema> & { approvalPolicy?: ApprovalPolicy };
export type BatchConfig = Config['batch'];
export type ServiceConfig = Config['service'];
export type EngineConfig = Config['engine'];
export type WatchConfig = Config['watch'];
export type IntakeConfig = Config['intake'];
export type ReportsConfig = Config['reports'];
export type StoreConfig = Config['store'];
export type { NotificationsConfig } from './notifications.js';
export type { ProcessConfig } from './process.js';

export const CONFIG_FILE_NAME = 'paybatch.config.json';

/** The workspace folder: --home, else PAYBATCH_HOME, else ./paybatch-data. */
export function workspaceHome(home: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return home ?? env.PAYBATCH_HOME ?? 'paybatch-data';
}

/** PAYBATCH_BASE_URL, PAYBATCH_API_KEY, PAYBATCH_API_SECRET and PAYBATCH_API_SECRET_FILE override the file. */
function serviceFromEnvironment(raw: unknown, env: NodeJS.ProcessEnv): unknown {
  const overrides: Record<string, string> = {};
  if (env.PAYBATCH_BASE_URL) overrides.base_url = env.PAYBATCH_BASE_URL;
  if (env.PAYBATCH_API_KEY) overrides.api_key = env.PAYBATCH_API_KEY;
  if (env.PAYBATCH_API_SECRET) overrides.api_secret = env.PAYBATCH_API_SECRET;
  if (env.PAYBATCH_API_SECRET_FILE) overrides.api_secret_file = env.PAYBATCH_API_SECRET_FILE;
  if (Object.keys(overrides).length === 0) return raw;
  const base = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const service = typeof base.service === 'object' && base.service !== null ? (base.service as Record<string, unknown>) : {};
  return { ...base, service: { ...service, ...overrides } };
}

/** PAYBATCH_DATABASE_URL and PAYBATCH_WORKER override store.url and store.worker. */
function storeFromEnvironment(raw: unknown, env: NodeJS.ProcessEnv): unknown {
  const overrides: Record<string, string> = {};
  if (env.PAYBATCH_DATABASE_URL) overrides.url = env.PAYBATCH_DATABASE_URL;
  if (env.PAYBATCH_WORKER) overrides.worker = env.PAYBATCH_WORKER;
  if (Object.keys(overrides).length === 0) return raw;
  const base = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const store = typeof base.store === 'object' && base.store !== null ? (base.store as Record<string, unknown>) : {};
  return { ...base, store: { ...store, ...overrides } };
}

/** Loads --config FILE, else PAYBATCH_CONFIG, else the workspace's paybatch.config.json if there is one, else the defaults; then the environment. */
export function loadConfig(options: { file?: string; home?: string; env?: NodeJS.ProcessEnv } = {}): Config {
  const env = options.env ?? process.env;
  const inWorkspace = join(workspaceHome(options.home, env), CONFIG_FILE_NAME);
  const file = options.file ?? (env.PAYBATCH_CONFIG || undefined) ?? (existsSync(inWorkspace) ? inWorkspace : undefined);
  const raw = storeFromEnvironment(serviceFromEnvironment(file ? readJsonFile(file, 'configuration') : {}, env), env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(describeIssues(`configuration ${file ?? '(defaults)'}`, parsed.error));
  const service = parsed.data.service;
  if (service.base_url && (!service.api_key || (!service.api_secret && !service.api_secret_file))) {
    throw new ConfigError(`configuration ${file ?? '(defaults)'} is not valid:\n  service: a base_url needs api_key and api_secret (or api_secret_file); set them in the file or in PAYBATCH_API_KEY and PAYBATCH_API_SECRET`);
  }
  // The console's cookie secret, like public keys, is read relative to the configuration file.
  const secretFile = parsed.data.console.cookie_secret_file;
  if (secretFile) parsed.data.console.cookie_secret_file = resolve(file ? dirname(file) : process.cwd(), secretFile);
  // Public keys are read relative to the configuration file; a policy that cannot work stops the start (exit 78).
  if (parsed.data.approvals.enabled) {
    const policy = approvalPolicy(parsed.data.approvals, file ? dirname(file) : process.cwd());
    if (typeof policy === 'string') throw new ConfigError(`configuration ${file ?? '(defaults)'} is not valid:\n  approvals: ${policy}`);
    return { ...parsed.data, approvalPolicy: policy };
  }
  return parsed.data;
}

/** Where the service delivers webhooks, and the URL they are signed over [D3]: watch.public_url, else http://HOST:PORT/webhooks. */
export function webhookUrl(watch: WatchConfig, port: number = watch.listen.port): string {
  const host = watch.listen.host.includes(':') ? `[${watch.listen.host}]` : watch.listen.host;
  return watch.public_url ?? `http://${host}:${port}/webhooks`;
}

/** The per-row limits in minor units, for the row rules. */
export function maxRowAmountMinor(batch: BatchConfig): Record<string, bigint> {
  return minorAmounts(batch.max_row_amount);
}

/** batch.warn_row_amount in minor units: the amount over which a row is warned of before approval. */
export function warnRowAmountMinor(batch: BatchConfig): Record<string, bigint> {
  return minorAmounts(batch.warn_row_amount);
}

function minorAmounts(major: Readonly<Record<string, string>>): Record<string, bigint> {
  const limits: Record<string, bigint> = {};
  for (const [currency, amount] of Object.entries(major)) {
    const parsed = parseMajorAmount(amount, currencyDecimals(currency) as number);
    if (parsed.ok) limits[currency] = parsed.minor;
  }
  return limits;
}
