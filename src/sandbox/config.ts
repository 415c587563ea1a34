/**
 * The sandbox's configuration: defaults from config/sandbox.default.json, then a
 * user's file, then programmatic overrides. Validated at start; an error names
 * the file and the key.
 */
import { z } from 'zod';
import defaults from '../../config/sandbox.default.json' with { type: 'json' };
import { ConfigError } from '../errors.js';
import { describeIssues, mergeDeep, readJsonFile } from '../config/json.js';
import { currencyDecimals, parseDecimal } from './money.js';

const rate = z.number().min(0).max(1);
const ms = z.number().int().min(0);
const range = z.tuple([ms, ms]).refine(([min, max]) => min <= max, 'min must not exceed max');
const currency = z.string().refine((c) => currencyDecimals(c) !== undefined, 'not an ISO 4217 currency code');
const minorUnits = z.string().regex(/^\d+$/, 'an integer count of minor units, as a string');
const alpha3 = z.string().regex(/^[A-Z]{3}$/, 'an ISO 3166-1 alpha-3 code');

const corridorSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  countries: z.union([z.literal('*'), z.array(alpha3).min(1)]),
  type: z.enum(['bank', 'cash']),
  input_currency_codes: z.array(currency).min(1),
  output_currency_codes: z.array(currency).min(1),
  required_recipient_fields: z.array(z.string()),
  active: z.boolean().optional(),
});

const faultsSchema = z.strictObject({
  latency: z.strictObject({ rate, min_ms: ms, max_ms: ms }),
  http_500_rate: rate,
  http_503_rate: rate,
  http_429_rate: rate,
  retry_after_s: z.number().int().min(0),
  reset_after_commit: z.strictObject({ create: rate, fund: rate }),
  late_commit_rate: rate,
  webhook_drop_rate: rate,
});

export const sandboxConfigSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  base_path: z.string().regex(/^(\/[A-Za-z0-9._-]+)*$/, 'empty or a path like /v1'),
  api_key: z.string().min(1),
  api_secret: z.string().min(8),
  seed: z.number().int(),
  balances: z.record(currency, minorUnits),
  rates: z.record(
    z.string().regex(/^[A-Z]{3}\/[A-Z]{3}$/, 'INPUT/OUTPUT, e.g. USD/GBP'),
    z.string().refine((r) => /^\d+(\.\d+)?$/.test(r) && parseDecimal(r).numerator > 0n, 'a positive decimal string'),
  ),
  funding_window_ms: ms,
  kyc: z.strictObject({
    mode: z.enum(['waived', 'review']),
    verify_after_ms: ms,
    approve_after_ms: ms,
    sanction_list: z.array(z.string()),
  }),
  payout: z.strictObject({
    clearing_ms: ms,
    quick_ms: ms,
    delay_ms: range,
    slow_delay_ms: range,
    error_retry_ms: ms,
    cancel_ms: ms,
    refund_ms: ms,
  }),
  corridors: z.array(corridorSchema),
  faults: faultsSchema,
  webhooks: z.strictObject({ timeout_ms: ms, concurrency: z.number().int().min(1).max(64) }),
  max_body_bytes: z.number().int().min(1024),
  live_style: z.boolean(),
  tick_ms: z.number().int().min(1),
});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;
export type CorridorConfig = z.infer<typeof corridorSchema>;
export type FaultConfig = z.infer<typeof faultsSchema>;
export const faultConfigSchema = faultsSchema;

/** Partial at every depth: what a user file or a test may override. */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
export type SandboxConfigInput = DeepPartial<SandboxConfig>;

export function loadSandboxConfig(options: { file?: string; overrides?: SandboxConfigInput } = {}): SandboxConfig {
  let raw: unknown = defaults;
  const source = options.file ? `sandbox config ${options.file}` : 'sandbox config';
  if (options.file) raw = mergeDeep(raw, readJsonFile(options.file, 'sandbox config'));
  if (options.overrides) raw = mergeDeep(raw, options.overrides);
  const parsed = sandboxConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(describeIssues(source, parsed.error));
  return parsed.data;
}
