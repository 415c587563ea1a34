/**
 * The `notifications` key of the configuration (see src/notify): which channels
 * are told, about what, and how hard delivery is retried. Default: no channels,
 * nothing told. Secrets (a webhook's signing secret, an SMTP password) may come
 * from a file (a mounted secret), read when the channels are opened; neither is
 * ever logged nor recorded in the audit trail, and a chat URL (its path is its
 * token) is treated as one.
 */
import { z } from 'zod';

/** What a channel can be told about. A channel without `events` is told about all of them. */
export const NOTIFICATION_EVENTS = [
  'approval_requested', 'batch_settled', 'row_attention', 'balance_exhausted', 'file_rejected', 'reconciliation_differences', 'file_changed',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

const positive = z.number().int().positive();
const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http or https URL' });
const events = z.array(z.enum(NOTIFICATION_EVENTS, { message: `must be one of ${NOTIFICATION_EVENTS.join(', ')}` })).min(1).optional();
/** A send is cut off after this; the outbox claim (src/notify/notifier.ts) outlasts a whole send, so one worker holds each notification. */
const timeoutMs = positive.max(60_000).default(10_000);

const webhookChannel = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl,
  /** Sent as Authorization-Key: tells the receiver which secret signed the delivery. */
  key_id: z.string().min(1).max(200).default('paybatch'),
  secret: z.string().min(16, 'must be at least 16 characters').optional(),
  secret_file: z.string().min(1).optional(),
  events,
  timeout_ms: timeoutMs,
}).refine((c) => (c.secret === undefined) !== (c.secret_file === undefined), { message: 'give exactly one of secret and secret_file' });

const chatChannel = z.strictObject({
  type: z.literal('chat'),
  /** A Slack-compatible incoming webhook; its URL is a secret of its own, so it is never logged. */
  url: httpUrl,
  events,
  timeout_ms: timeoutMs,
});

const smtpSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65_535).default(587),
  /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
  secure: z.boolean().default(false),
  user: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  password_file: z.string().min(1).optional(),
}).refine((s) => s.password === undefined || s.password_file === undefined, { message: 'give at most one of password and password_file' })
  .refine((s) => (s.user === undefined) === (s.password === undefined && s.password_file === undefined), { message: 'a user needs a password (or password_file), and a password a user' });

const emailChannel = z.strictObject({
  type: z.literal('email'),
  smtp: smtpSchema,
  /** The sender, as an address or `Name <address>`. */
  from: z.string().min(3),
  to: z.array(z.email({ message: 'must be an email address' })).min(1),
  events,
  timeout_ms: timeoutMs,
});

const channelSchema = z.discriminatedUnion('type', [webhookChannel, chatChannel, emailChannel]);

const retrySchema = z.strictObject({
  /** The first retry waits up to base_ms, each next one up to twice as long (full jitter), never more than cap_ms. */
  base_ms: positive.default(5_000),
  cap_ms: positive.default(60 * 60_000),
  /** Attempts in all, the first one included; then the notification is given up (and the log says so). */
  attempts: positive.max(50).default(10),
}).refine((r) => r.cap_ms >= r.base_ms, { message: 'cap_ms must be at least base_ms' });

export const notificationsSchema = z.strictObject({
  channels: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'a channel name is 1 to 40 letters, digits, - or _'), channelSchema).default({}),
  retry: retrySchema.default(() => retrySchema.parse({})),
  /** How often the outbox is looked at for notifications due (a new one is sent at once, without waiting for this). */
  poll_ms: positive.max(10 * 60_000).default(5_000),
});

export type NotificationsConfig = z.infer<typeof notificationsSchema>;
export type ChannelConfig = NotificationsConfig['channels'][string];
export type WebhookChannelConfig = Extract<ChannelConfig, { type: 'webhook' }>;
export type ChatChannelConfig = Extract<ChannelConfig, { type: 'chat' }>;
export type EmailChannelConfig = Extract<ChannelConfig, { type: 'email' }>;

const HIDDEN = '(set, not recorded)';

/** The notifications configuration as it may be shown or recorded: secrets, passwords and chat URLs replaced. */
export function notificationsShown(config: NotificationsConfig): NotificationsConfig {
  const channels = Object.fromEntries(Object.entries(config.channels).map(([name, channel]): [string, ChannelConfig] => {
    if (channel.type === 'webhook') return [name, { ...channel, secret: channel.secret === undefined ? undefined : HIDDEN }];
    if (channel.type === 'chat') return [name, { ...channel, url: `${new URL(channel.url).origin}/${HIDDEN}` }];
    return [name, { ...channel, smtp: { ...channel.smtp, password: channel.smtp.password === undefined ? undefined : HIDDEN } }];
  }));
  return { ...config, channels };
}
