/**
 * The sandbox's state in SQLite: `:memory:` by default, a file with `--db` (or
 * the workspace's, for the embedded sandbox) so that state survives a restart
 * and is shared by every process that opens it (WAL; writes take turns). better-sqlite3 is synchronous, so every
 * operation wrapped in `atomic` is all-or-nothing: funding debits exactly once.
 * Amounts are integer strings; arithmetic happens on bigint in the service.
 */
import Database from 'better-sqlite3';
import type { SenderRecord, TransactionRecord } from './model.js';

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE transactions (
     id TEXT PRIMARY KEY, external_id TEXT NOT NULL UNIQUE, sender_id TEXT NOT NULL,
     state TEXT NOT NULL, next_at INTEGER, doc TEXT NOT NULL, recipient TEXT NOT NULL);
   CREATE INDEX transactions_next_at ON transactions(next_at) WHERE next_at IS NOT NULL;
   CREATE INDEX transactions_sender ON transactions(sender_id);
   CREATE TABLE senders (
     id TEXT PRIMARY KEY, external_id TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
     next_at INTEGER, doc TEXT NOT NULL);
   CREATE INDEX senders_next_at ON senders(next_at) WHERE next_at IS NOT NULL;
   CREATE TABLE balances (currency TEXT PRIMARY KEY, amount TEXT NOT NULL);
   CREATE TABLE ledger (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL,
     transaction_id TEXT, currency TEXT NOT NULL, amount TEXT NOT NULL, balance_after TEXT NOT NULL);
   CREATE TABLE webhooks (id TEXT PRIMARY KEY, event_type TEXT NOT NULL UNIQUE, uri TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE deliveries (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, webhook_id TEXT NOT NULL,
     event_type TEXT NOT NULL, object_id TEXT NOT NULL, uri TEXT NOT NULL, outcome TEXT NOT NULL,
     http_status INTEGER, error TEXT);
   CREATE TABLE nonces (nonce TEXT PRIMARY KEY) WITHOUT ROWID;
   CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
];

/** How long a write waits for another process's to end before it fails. */
const BUSY_TIMEOUT_MS = 10_000;

export type LedgerKind = 'debit' | 'credit' | 'adjustment';

export interface LedgerEntry {
  seq: number;
  at: number;
  kind: LedgerKind;
  transaction_id: string | null;
  currency: string;
  amount: string;
  balance_after: string;
}

export interface WebhookRecord {
  id: string;
  event_type: string;
  uri: string;
  created_at: number;
}

export interface DeliveryRecord {
  seq: number;
  at: number;
  webhook_id: string;
  event_type: string;
  object_id: string;
  uri: string;
  outcome: 'delivered' | 'failed' | 'dropped';
  http_status: number | null;
  error: string | null;
}

export class SandboxStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<SandboxStore['prepare']>;

  constructor(file = ':memory:') {
    // A file may be shared by several processes (every command of a workspace on its embedded sandbox): each waits
    // its turn to write rather than failing at once.
    this.db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    this.inMemory = file === ':memory:';
    if (file !== ':memory:') {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
    }
    this.fresh = this.migrate();
    this.statements = this.prepare();
    const transaction = this.db.transaction((work: () => unknown) => work());
    // IMMEDIATE takes the write lock at BEGIN: a transaction that read, then writes, is never refused (SQLITE_BUSY)
    // because another process wrote in between. In memory, one connection alone: the plain kind.
    this.runAtomically = this.inMemory ? transaction : transaction.immediate;
    this.dataVersion = this.inMemory ? null : this.db.prepare('PRAGMA data_version').pluck();
    this.seenVersion = this.dataVersion?.get() as number | undefined;
  }

  /** Changes when another connection (another process) commits: the caches below are then dropped. Null in memory. */
  private readonly dataVersion: Database.Statement | null;
  private seenVersion: number | undefined;

  /** Drops what is cached when another process changed the database since this one last looked. */
  private freshen(): void {
    if (!this.dataVersion) return;
    const version = this.dataVersion.get() as number;
    if (version === this.seenVersion) return;
    this.seenVersion = version;
    this.senderCache.clear();
    this.settingsCache.clear();
    this.webhooksByType = undefined;
  }

  private readonly inMemory: boolean;
  /** Used nonces, when the database is in memory anyway: a Set is far cheaper than a B-tree insert. */
  private readonly memoryNonces = new Set<string>();
  /** Senders are read on every create and every answer but rarely change; cleared on any rollback. */
  private readonly senderCache = new Map<string, SenderRecord>();

  /** True when this database was just created, so configuration seeds it. */
  readonly fresh: boolean;

  /** Applies the migrations not yet applied, each in its own transaction; true for a new database. */
  private migrate(): boolean {
    // Counted and applied under the write lock: two processes opening a new file at once apply each migration once,
    // and only the one that created the tables seeds them.
    return this.db.transaction(() => {
      this.db.exec('CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = (this.db.prepare('SELECT COUNT(*) AS n FROM migrations').get() as { n: number }).n;
      MIGRATIONS.slice(applied).forEach((sql, index) => {
        this.db.exec(sql);
        this.db.prepare('INSERT INTO migrations (version, applied_at) VALUES (?, ?)').run(applied + index + 1, new Date().toISOString());
      });
      return applied === 0;
    }).immediate();
  }

  private prepare() {
    const db = this.db;
    return {
      txById: db.prepare('SELECT doc, recipient FROM transactions WHERE id = ?'),
      txByExternal: db.prepare('SELECT doc, recipient FROM transactions WHERE external_id = ?'),
      txInsert: db.prepare('INSERT INTO transactions (id, external_id, sender_id, state, next_at, doc, recipient) VALUES (@id, @external_id, @sender_id, @state, @next_at, @doc, @recipient)'),
      txUpdate: db.prepare('UPDATE transactions SET state = @state, next_at = @next_at, doc = @doc WHERE id = @id'),
      txDue: db.prepare('SELECT doc, recipient FROM transactions WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, id LIMIT ?'),
      txBySenderInState: db.prepare('SELECT doc, recipient FROM transactions WHERE sender_id = ? AND state = ?'),
      txAll: db.prepare('SELECT doc, recipient FROM transactions ORDER BY rowid'),
      senderById: db.prepare('SELECT doc FROM senders WHERE id = ?').pluck(),
      senderIdByExternal: db.prepare('SELECT id FROM senders WHERE external_id = ?').pluck(),
      senderUpsert: db.prepare(`INSERT INTO senders (id, external_id, state, next_at, doc) VALUES (@id, @external_id, @state, @next_at, @doc)
        ON CONFLICT(id) DO UPDATE SET state = excluded.state, next_at = excluded.next_at, doc = excluded.doc`),
      senderDue: db.prepare('SELECT doc FROM senders WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, id LIMIT ?').pluck(),
      balance: db.prepare('SELECT amount FROM balances WHERE currency = ?').pluck(),
      balances: db.prepare('SELECT currency, amount FROM balances ORDER BY currency'),
      balanceSet: db.prepare('INSERT INTO balances (currency, amount) VALUES (?, ?) ON CONFLICT(currency) DO UPDATE SET amount = excluded.amount'),
      ledgerInsert: db.prepare('INSERT INTO ledger (at, kind, transaction_id, currency, amount, balance_after) VALUES (?, ?, ?, ?, ?, ?)'),
      ledgerAll: db.prepare('SELECT * FROM ledger WHERE seq > ? ORDER BY seq LIMIT ?'),
      webhookInsert: db.prepare('INSERT INTO webhooks (id, event_type, uri, created_at) VALUES (@id, @event_type, @uri, @created_at)'),
      webhookDelete: db.prepare('DELETE FROM webhooks WHERE id = ?'),
      webhooks: db.prepare('SELECT * FROM webhooks ORDER BY created_at, id'),
      deliveryInsert: db.prepare('INSERT INTO deliveries (at, webhook_id, event_type, object_id, uri, outcome, http_status, error) VALUES (@at, @webhook_id, @event_type, @object_id, @uri, @outcome, @http_status, @error)'),
      deliveries: db.prepare('SELECT * FROM deliveries WHERE seq > ? ORDER BY seq LIMIT ?'),
      nonceInsert: db.prepare('INSERT OR IGNORE INTO nonces (nonce) VALUES (?)'),
      settingGet: db.prepare('SELECT value FROM settings WHERE key = ?').pluck(),
      settingSet: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    };
  }

  /** One transaction wrapper, built once: better-sqlite3 builds new closures on every `db.transaction()` call. */
  private readonly runAtomically: (work: () => unknown) => unknown;

  /** Runs `work` in one SQLite transaction: all of it happens, or none. */
  atomic<T>(work: () => T): T {
    this.freshen();
    try {
      return this.runAtomically(work) as T;
    } catch (error) {
      this.senderCache.clear();
      throw error;
    }
  }

  close(): void {
    this.db.close();
  }

  transaction(id: string): TransactionRecord | undefined {
    return toTransaction(this.statements.txById.get(id) as TransactionRow | undefined);
  }

  transactionByExternalId(externalId: string): TransactionRecord | undefined {
    return toTransaction(this.statements.txByExternal.get(externalId) as TransactionRow | undefined);
  }

  insertTransaction(tx: TransactionRecord): void {
    const { recipient, ...rest } = tx;
    this.statements.txInsert.run({ id: tx.id, external_id: tx.external_id, sender_id: tx.sender_id, state: tx.state, next_at: tx.next_at, doc: JSON.stringify(rest), recipient: JSON.stringify(recipient) });
  }

  /** The recipient never changes after creation, so only the rest of the record is rewritten. */
  updateTransaction(tx: TransactionRecord): void {
    const { recipient: _unchanged, ...rest } = tx;
    this.statements.txUpdate.run({ id: tx.id, state: tx.state, next_at: tx.next_at, doc: JSON.stringify(rest) });
  }

  dueTransactions(now: number, limit: number): TransactionRecord[] {
    return (this.statements.txDue.all(now, limit) as TransactionRow[]).map((row) => toTransaction(row) as TransactionRecord);
  }

  transactionsOfSenderInState(senderId: string, state: string): TransactionRecord[] {
    return (this.statements.txBySenderInState.all(senderId, state) as TransactionRow[]).map((row) => toTransaction(row) as TransactionRecord);
  }

  *allTransactions(): Generator<TransactionRecord> {
    for (const row of this.statements.txAll.iterate()) yield toTransaction(row as TransactionRow) as TransactionRecord;
  }

  sender(id: string): SenderRecord | undefined {
    this.freshen();
    const cached = this.senderCache.get(id);
    if (cached) return cached;
    const sender = parse<SenderRecord>(this.statements.senderById.get(id));
    if (sender) this.senderCache.set(sender.id, sender);
    return sender;
  }

  senderByExternalId(externalId: string): SenderRecord | undefined {
    const id = this.statements.senderIdByExternal.get(externalId) as string | undefined;
    return id === undefined ? undefined : this.sender(id);
  }

  saveSender(sender: SenderRecord): void {
    this.statements.senderUpsert.run({ id: sender.id, external_id: sender.external_id, state: sender.state, next_at: sender.next_at, doc: JSON.stringify(sender) });
    this.senderCache.set(sender.id, sender);
  }

  dueSenders(now: number, limit: number): SenderRecord[] {
    return (this.statements.senderDue.all(now, limit) as string[]).map((doc) => JSON.parse(doc) as SenderRecord);
  }

  balance(currency: string): bigint {
    const amount = this.statements.balance.get(currency) as string | undefined;
    return BigInt(amount ?? '0');
  }

  balances(): Record<string, string> {
    const rows = this.statements.balances.all() as { currency: string; amount: string }[];
    return Object.fromEntries(rows.map((row) => [row.currency, row.amount]));
  }

  /** Moves a balance and records the movement in the append-only ledger, in one step. */
  moveBalance(at: number, kind: LedgerKind, currency: string, delta: bigint, transactionId: string | null): bigint {
    const after = this.balance(currency) + delta;
    if (after < 0n) throw new Error(`balance of ${currency} would go negative`);
    this.statements.balanceSet.run(currency, after.toString());
    // Debits and credits are recorded as positive amounts (the kind says which way);
    // an operator's adjustment keeps its sign, so the ledger alone sums to the balances.
    const recorded = kind === 'adjustment' || delta >= 0n ? delta : -delta;
    this.statements.ledgerInsert.run(at, kind, transactionId, currency, recorded.toString(), after.toString());
    return after;
  }

  ledger(afterSeq = 0, limit = 10_000): LedgerEntry[] {
    return this.statements.ledgerAll.all(afterSeq, limit) as LedgerEntry[];
  }

  /** Asked for every state change, so kept in memory; loaded once, then written through. */
  private webhooksByType: Map<string, WebhookRecord> | undefined;

  private registrations(): Map<string, WebhookRecord> {
    this.freshen();
    this.webhooksByType ??= new Map(this.webhooks().map((w) => [w.event_type, w]));
    return this.webhooksByType;
  }

  insertWebhook(webhook: WebhookRecord): void {
    this.statements.webhookInsert.run(webhook);
    this.registrations().set(webhook.event_type, webhook);
  }

  webhookForEvent(eventType: string): WebhookRecord | undefined {
    return this.registrations().get(eventType);
  }

  deleteWebhook(id: string): boolean {
    const deleted = this.statements.webhookDelete.run(id).changes > 0;
    this.webhooksByType = undefined;
    return deleted;
  }

  webhooks(): WebhookRecord[] {
    return this.statements.webhooks.all() as WebhookRecord[];
  }

  recordDelivery(delivery: Omit<DeliveryRecord, 'seq'>): void {
    this.statements.deliveryInsert.run(delivery);
  }

  deliveries(afterSeq = 0, limit = 10_000): DeliveryRecord[] {
    return this.statements.deliveries.all(afterSeq, limit) as DeliveryRecord[];
  }

  /** [D2] Records a nonce; false when it was already used. */
  useNonce(nonce: string): boolean {
    if (!this.inMemory) return this.statements.nonceInsert.run(nonce).changes === 1;
    if (this.memoryNonces.has(nonce)) return false;
    this.memoryNonces.add(nonce);
    return true;
  }

  /** Settings are read on every request (clock offset, faults), so they are cached; another process's change is seen through freshen(). */
  private readonly settingsCache = new Map<string, unknown>();

  setting<T>(key: string): T | undefined {
    this.freshen();
    if (!this.settingsCache.has(key)) {
      const value = this.statements.settingGet.get(key) as string | undefined;
      this.settingsCache.set(key, value === undefined ? undefined : JSON.parse(value));
    }
    return this.settingsCache.get(key) as T | undefined;
  }

  setSetting(key: string, value: unknown): void {
    this.statements.settingSet.run(key, JSON.stringify(value));
    this.settingsCache.set(key, value);
  }
}

interface TransactionRow {
  doc: string;
  recipient: string;
}

function toTransaction(row: TransactionRow | undefined): TransactionRecord | undefined {
  if (!row) return undefined;
  return { ...(JSON.parse(row.doc) as Omit<TransactionRecord, 'recipient'>), recipient: JSON.parse(row.recipient) as TransactionRecord['recipient'] };
}

function parse<T>(doc: unknown): T | undefined {
  return typeof doc === 'string' ? (JSON.parse(doc) as T) : undefined;
}
