/**
 * A pain.001 paid on the sandbox with `paybatch run`, answered with its
 * pain.002 once the batch settles: every transfer with its status (ACSC paid,
 * RJCT unpaid with its ISO reason), matching the results CSV row for row.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX } from '../helpers/engine.js';
import type { Transfer } from '../helpers/pain001.js';
import { ISO_CONFIG, pain001 } from '../helpers/pain001.js';
import { batchDefaults } from '../helpers/validation.js';
import { validateAgainst, xmllintAvailable } from '../helpers/xmllint.js';

const gbp = (e2e: string, amount: string, account = '66374958', email?: string): Transfer => ({
  e2e, amount, ccy: 'GBP', name: 'Alan Turing', mobile: '+44-7400123457', email,
  address: { street: '43 Adlington Road', town: 'Wilmslow', postcode: 'SK9 2BG', country: 'GB' },
  account, clearing: { system: 'GBDSC', member: '089999' },
});

/** xmllint and the official XSDs: the report must be a pain.002 any bank or ERP's validator takes. */
const xmllint = xmllintAvailable('the pain.002 schema check');

/** Each TxInfAndSts of a pain.002: its end-to-end id, status, reason code and its words, and amount. */
function statuses(xml: string): { e2e: string; status: string; reason: string | null; text?: string; amount: string }[] {
  return [...xml.matchAll(/<TxInfAndSts>(.*?)<\/TxInfAndSts>/g)].map(([, body]) => ({
    e2e: /<OrgnlEndToEndId>(.*?)</.exec(body as string)?.[1] as string,
    status: /<TxSts>(.*?)</.exec(body as string)?.[1] as string,
    reason: /<Rsn><Cd>(.*?)</.exec(body as string)?.[1] ?? null,
    ...(/<AddtlInf>(.*?)</.exec(body as string) ? { text: /<AddtlInf>(.*?)</.exec(body as string)?.[1] } : {}),
    amount: /<InstdAmt Ccy="(\w+)">(.*?)</.exec(body as string)?.slice(1).join(' ') as string,
  }));
}

describe('a pain.001 paid and answered with a pain.002', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-pain002-'));
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['03', '09'] as const)('pays pain.001.001.%s and writes the matching pain.002 once settled', async (version) => {
    const home = join(dir, version);
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { ...batchDefaults, ...ISO_CONFIG, invalid_rows: 'skip_invalid' } }));
    // The second transfer's account fails the UK modulus check, and the fourth's email is not one (no ISO code
    // for that: NARR, with the words): both refused at validation, never sent.
    writeFileSync(join(home, 'inbox', 'erp-run.xml'), pain001(version, [
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-1', '1250.00'), gbp('INV-2', '10.00', '66374959')] },
      { debtor: 'Acme Trading Ltd', transfers: [gbp('INV-3', '0.01'), gbp('INV-4', '5.00', '66374958', 'alan.turing-at-example.org')] },
    ], { messageId: `ERP-${version}` }));
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    const result = await runCli(['run', '--wait', '60s'], { env });
    expect(result.code, result.stderr).toBe(0);
    const outbox = join(home, 'outbox');
    const report = readdirSync(outbox).find((name) => name.endsWith('.pain002.xml'));
    expect(report, readdirSync(outbox).join(', ')).toBeDefined();
    const xml = readFileSync(join(outbox, report as string), 'utf8');
    expect(xml).toContain(`xmlns="urn:iso:std:iso:20022:tech:xsd:${version === '03' ? 'pain.002.001.03' : 'pain.002.001.10'}"`);
    expect(xml).toContain(`<OrgnlMsgId>ERP-${version}</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.${version}</OrgnlMsgNmId><OrgnlNbOfTxs>4</OrgnlNbOfTxs><OrgnlCtrlSum>1265.01</OrgnlCtrlSum><GrpSts>PART</GrpSts>`);
    expect(statuses(xml)).toEqual([
      { e2e: 'INV-1', status: 'ACSC', reason: null, amount: 'GBP 1250.00' },
      { e2e: 'INV-2', status: 'RJCT', reason: 'AC01', text: expect.stringContaining('modulus') as string, amount: 'GBP 10.00' },
      { e2e: 'INV-3', status: 'ACSC', reason: null, amount: 'GBP 0.01' },
      { e2e: 'INV-4', status: 'RJCT', reason: 'NARR', text: expect.stringMatching(/^invalid_email: .*email/) as string, amount: 'GBP 5.00' },
    ]);
    if (xmllint !== null) {
      const verdict = validateAgainst(xmllint, version === '03' ? 'pain.002.001.03' : 'pain.002.001.10', join(outbox, report as string));
      expect(verdict.valid, verdict.output).toBe(true);
    }
    expect(xml.match(/<OrgnlPmtInfId>(.*?)</g)).toEqual(['<OrgnlPmtInfId>PMT-1<', '<OrgnlPmtInfId>PMT-2<']);
    // The results CSV says the same, row for row.
    const results = parse(readFileSync(join(outbox, (report as string).replace('.pain002.xml', '.results.csv'))), { columns: true }) as Record<string, string>[];
    expect(results.map((r) => [r.external_id || null, r.state])).toEqual([['INV-1', 'paid'], ['INV-2', 'invalid'], ['INV-3', 'paid'], ['INV-4', 'invalid']]);
    // Written again on request, from the archived file: the same report but for the time it was made.
    const batchId = (report as string).replace('.pain002.xml', '');
    const again = await runCli(['report', '--batch', batchId, '--format', 'pain002'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(join(outbox, report as string));
    const withoutTime = (text: string): string => text.replace(/<CreDtTm>[^<]*<\/CreDtTm>/, '');
    expect(withoutTime(readFileSync(join(outbox, report as string), 'utf8'))).toBe(withoutTime(xml));
  });
});
