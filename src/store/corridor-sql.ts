/**
 * The corridor summary (batch_corridors) in both databases' SQL: written as a
 * batch's rows are made ready, read by the corridor check before sending. A
 * corridor is the recipient's country, the payout type and both currencies;
 * the first two live only in the stored request, hence one expression per
 * database for each (store/request-sql.ts). Rows never become ready again once
 * they leave that phase, so the rows still ready are all the check ever needs.
 */
import { postgresRequestField, sqliteRequestField } from './request-sql.js';

const COLUMNS = 'batch_id, country_code, type, input_currency, output_currency, rows';
const KEY = '(batch_id, country_code, type, input_currency, output_currency)';
/** Adds to what an earlier chunk of the same batch counted. */
const ADD = `ON CONFLICT ${KEY} DO UPDATE SET rows = batch_corridors.rows + excluded.rows`;

const sqliteCountry = (row = ''): string => sqliteRequestField('recipientCountry', `${row}request`);
const sqliteType = (row = ''): string => sqliteRequestField('type', `${row}request`);
const pgCountry = (row = ''): string => postgresRequestField('recipientCountry', `${row}request`);
const pgType = (row = ''): string => postgresRequestField('type', `${row}request`);

/** Ready rows of the batch `r` whose corridor is the summary row `c`'s. The plain columns come first: they are cheap to compare, the JSON is not. */
const readyOfCorridor = (country: string, type: string): string => `r.batch_id = c.batch_id AND r.phase = 'ready'
  AND r.input_currency = c.input_currency AND r.output_currency = c.output_currency AND ${type} = c.type AND ${country} = c.country_code`;

/**
 * SQLite has no statistics here (ANALYZE is never run), and without them it
 * takes the primary key for `batch_id = ? AND phase = 'ready'`: every row of
 * the batch read, sent ones first, to find the ready ones. The index of phases
 * goes to the ready rows directly.
 */
const READY_BY_INDEX = 'INDEXED BY rows_batch_phase';

const ORDER = 'ORDER BY country_code, type, input_currency, output_currency';

export const SQLITE_CORRIDORS = {
  /**
   * Params: batch, country, type, input currency, output currency, rows. Rows stored ready, counted as they are
   * stored (their corridor known without reading their JSON): reading the batch back at its acceptance to count
   * them took 3 s of a million-row intake.
   */
  count: `INSERT INTO batch_corridors (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ${ADD}`,
  /** Params: batch, line. A ready row made invalid before its batch was accepted (a late finding) no longer counts. */
  uncount: `INSERT INTO batch_corridors (${COLUMNS})
    SELECT batch_id, ${sqliteCountry()}, ${sqliteType()}, input_currency, output_currency, -1 FROM rows
    WHERE batch_id = ? AND line = ? ${ADD}`,
  /** Params: batch, after line, last line. One chunk of an acceptance: its rows still checking, about to be made ready. */
  summariseChecking: `INSERT INTO batch_corridors (${COLUMNS})
    SELECT batch_id, ${sqliteCountry()}, ${sqliteType()}, input_currency, output_currency, COUNT(*) FROM rows ${READY_BY_INDEX}
    WHERE batch_id = ? AND line > ? AND line <= ? AND phase = 'checking' GROUP BY 1, 2, 3, 4, 5 ${ADD}`,
  /** Param: batch. */
  summarised: 'SELECT 1 FROM batch_corridors WHERE batch_id = ? LIMIT 1',
  /**
   * Param: batch. A batch accepted before the summary existed (none
   * `summarised`, asked in the same transaction): its rows still ready. Asked
   * apart, since SQLite would walk every ready row to test a condition false
   * for all of them.
   */
  summariseReady: `INSERT INTO batch_corridors (${COLUMNS})
    SELECT batch_id, ${sqliteCountry()}, ${sqliteType()}, input_currency, output_currency, COUNT(*) FROM rows ${READY_BY_INDEX}
    WHERE batch_id = ? AND phase = 'ready' GROUP BY 1, 2, 3, 4, 5`,
  /**
   * Param: batch. The summary rows of the batch whose corridor still has a
   * ready row, as the check found them by reading the ready rows: a corridor
   * whose rows were all sent (or ended) asks nothing of the service. One with
   * ready rows is answered by the first of them; one without costs a pass over
   * the batch's ready rows (plain columns compared first).
   */
  withReadyRows: `SELECT country_code, type, input_currency, output_currency, rows FROM batch_corridors c
    WHERE c.batch_id = ? AND EXISTS (SELECT 1 FROM rows r ${READY_BY_INDEX} WHERE ${readyOfCorridor(sqliteCountry('r.'), sqliteType('r.'))}) ${ORDER}`,
  /** Params: outcome, detail, batch, input currency, output currency, type, country. */
  endReady: `UPDATE rows ${READY_BY_INDEX} SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1
    WHERE batch_id = ? AND phase = 'ready' AND input_currency = ? AND output_currency = ? AND ${sqliteType()} = ? AND ${sqliteCountry()} = ?
    RETURNING line, external_id`,
};

export const PG_CORRIDORS = {
  /** Param: $1 batch. The whole acceptance is one transaction: every ready row of the batch was made ready by it. */
  summariseAccepted: `INSERT INTO batch_corridors (${COLUMNS})
    SELECT batch_id, ${pgCountry()}, ${pgType()}, input_currency, output_currency, COUNT(*) FROM rows
    WHERE batch_id = $1 AND phase = 'ready' GROUP BY 1, 2, 3, 4, 5 ${ADD}`,
  /**
   * Param: $1 batch. A batch accepted before the summary existed: its rows
   * still ready, once (two workers at it together write the same rows; the
   * second's are ignored).
   */
  summariseReady: `INSERT INTO batch_corridors (${COLUMNS})
    SELECT batch_id, ${pgCountry()}, ${pgType()}, input_currency, output_currency, COUNT(*) FROM rows
    WHERE batch_id = $1 AND phase = 'ready' AND NOT EXISTS (SELECT 1 FROM batch_corridors WHERE batch_id = $1)
    GROUP BY 1, 2, 3, 4, 5 ON CONFLICT ${KEY} DO NOTHING`,
  /**
   * Param: $1 batch. As SQLite's, but a lateral LIMIT 1, not EXISTS: PostgreSQL turns an EXISTS
   * into a join that hashes every ready row of the batch (each request parsed);
   * this asks for the first ready row of each corridor.
   */
  withReadyRows: `SELECT country_code, type, input_currency, output_currency, rows FROM batch_corridors c
    CROSS JOIN LATERAL (SELECT 1 FROM rows r WHERE ${readyOfCorridor(pgCountry('r.'), pgType('r.'))} LIMIT 1) ready
    WHERE c.batch_id = $1 ${ORDER}`,
  /** Params: $1 outcome, $2 detail, $3 batch, $4 input currency, $5 output currency, $6 type, $7 country. */
  endReady: `UPDATE rows SET phase = 'not_sent', outcome = $1, outcome_detail = $2, revision = revision + 1
    WHERE batch_id = $3 AND phase = 'ready' AND input_currency = $4 AND output_currency = $5 AND ${pgType()} = $6 AND ${pgCountry()} = $7
    RETURNING line, external_id`,
};
