/**
 * Control totals beside a batch file, as payment formats carry them (NbOfTxs,
 * CtrlSum in pain.001; the batch control record of NACHA): the number of rows,
 * the total per output currency in major units, and the SHA-256 of the bytes.
 * A file that does not match its manifest exactly is refused with both figures.
 * Pure.
 *
 *   { "rows": 400, "totals": { "GBP": "123456.78" }, "sha256": "9f86d0…" }
 */
import { currencyDecimals, formatMoney, parseMajorAmount } from '../validate/money.js';

export interface Manifest {
  rows?: number;
  /** Output currency to the total of its rows, minor units. */
  totals?: Map<string, bigint>;
  sha256?: string;
}

/** What the file turned out to hold: every data row, and the amount of every row whose amount could be read. */
export interface FileFigures {
  rows: number;
  totals: ReadonlyMap<string, bigint>;
  sha256: string;
}

const KEYS = new Set(['rows', 'totals', 'sha256']);

export function parseManifest(text: string): { manifest: Manifest } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The reason only: the content is not echoed (a file given here by mistake may hold anything).
    return { error: 'it is not valid JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: 'it must be a JSON object with rows, totals and/or sha256' };
  const object = raw as Record<string, unknown>;
  const unknown = Object.keys(object).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) return { error: `unknown keys: ${unknown.slice(0, 5).join(', ')} (allowed: rows, totals, sha256)` };
  const manifest: Manifest = {};
  if (object.rows !== undefined) {
    if (typeof object.rows !== 'number' || !Number.isSafeInteger(object.rows) || object.rows < 0) return { error: 'rows must be a whole number' };
    manifest.rows = object.rows;
  }
  if (object.sha256 !== undefined) {
    if (typeof object.sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(object.sha256)) return { error: 'sha256 must be 64 hexadecimal characters' };
    manifest.sha256 = object.sha256.toLowerCase();
  }
  if (object.totals !== undefined) {
    if (typeof object.totals !== 'object' || object.totals === null || Array.isArray(object.totals)) return { error: 'totals must map each output currency to its total, such as {"GBP": "1234.56"}' };
    manifest.totals = new Map();
    for (const [currency, value] of Object.entries(object.totals as Record<string, unknown>)) {
      const decimals = currencyDecimals(currency);
      if (decimals === undefined) return { error: `totals: ${currency} is not an ISO 4217 currency code` };
      if (typeof value !== 'string') return { error: `totals.${currency} must be a string such as "1234.56" (a JSON number may not be exact)` };
      const parsed = parseMajorAmount(value, decimals);
      // A total of zero is a figure like any other; a negative one is not.
      if (!parsed.ok && (parsed.code !== 'amount_not_positive' || value.startsWith('-'))) return { error: `totals.${currency}: ${parsed.message}` };
      manifest.totals.set(currency, parsed.ok ? parsed.minor : 0n);
    }
  }
  if (manifest.rows === undefined && manifest.totals === undefined && manifest.sha256 === undefined) return { error: 'it names none of rows, totals, sha256' };
  return { manifest };
}

const major = (minor: bigint, currency: string): string => formatMoney(minor, currency);

/** Each figure of the manifest the file does not match, with both sides; empty when it matches exactly. */
export function compareWithManifest(manifest: Manifest, file: FileFigures): string[] {
  const differences: string[] = [];
  if (manifest.rows !== undefined && manifest.rows !== file.rows) differences.push(`rows: the manifest says ${manifest.rows}, the file has ${file.rows}`);
  if (manifest.sha256 !== undefined && manifest.sha256 !== file.sha256) differences.push(`sha256: the manifest says ${manifest.sha256}, the file's is ${file.sha256}`);
  if (manifest.totals !== undefined) {
    const currencies = [...new Set([...manifest.totals.keys(), ...file.totals.keys()])].sort();
    for (const currency of currencies) {
      const expected = manifest.totals.get(currency) ?? 0n;
      const found = file.totals.get(currency) ?? 0n;
      if (expected !== found) differences.push(`total in ${currency}: the manifest says ${major(expected, currency)}, the file has ${major(found, currency)}`);
    }
  }
  return differences;
}
