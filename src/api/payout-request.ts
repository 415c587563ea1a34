/**
 * The body of `POST /transactions` [2.1] as paybatch sends it: what the
 * client sends and what an answer is checked against. Batch rows are turned
 * into one by batch/payout-request.ts.
 */
export interface PayoutRequest {
  external_id: string;
  type: string;
  input_currency_code: string;
  output_currency_code: string;
  output_amount_in_cents: string;
  sender: Record<string, string>;
  recipient: Record<string, string>;
}
