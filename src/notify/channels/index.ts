/** The senders for the configured channels, secrets read from their files once, here. */
import type { ChannelConfig, NotificationsConfig } from '../config.js';
import { readSecretFile } from '../config.js';
import { chatSender } from './chat.js';
import { emailSender } from './email.js';
import { httpDispatcher } from './http.js';
import type { Sender } from './sender.js';
import { webhookSender } from './webhook.js';

export interface Channels {
  senders: Map<string, Sender>;
  /** Everything a message must never quote: signing secrets, passwords, chat URLs. */
  secrets: string[];
  close(): Promise<void>;
}

function senderFor(name: string, channel: ChannelConfig, baseDir: string | undefined, make: { dispatcher: () => ReturnType<typeof httpDispatcher> }): { sender: Sender; secrets: string[] } {
  if (channel.type === 'webhook') {
    const secret = channel.secret ?? readSecretFile(channel.secret_file as string, `the secret file of notification channel ${name}`, baseDir);
    return { sender: webhookSender({ url: channel.url, keyId: channel.key_id, secret, timeoutMs: channel.timeout_ms }, make.dispatcher()), secrets: [secret] };
  }
  if (channel.type === 'chat') {
    // The chat URL's path is its token: whoever has it can post.
    return { sender: chatSender({ url: channel.url, timeoutMs: channel.timeout_ms }, make.dispatcher()), secrets: [channel.url, new URL(channel.url).pathname] };
  }
  const { smtp } = channel;
  const password = smtp.password ?? (smtp.password_file ? readSecretFile(smtp.password_file, `the SMTP password file of notification channel ${name}`, baseDir) : undefined);
  const sender = emailSender({ host: smtp.host, port: smtp.port, secure: smtp.secure, user: smtp.user, password, from: channel.from, to: channel.to, timeoutMs: channel.timeout_ms });
  return { sender, secrets: password ? [password] : [] };
}

/** Builds every channel's sender; a secret file that cannot be read is a ConfigError naming the channel, never the content. */
export function openChannels(config: NotificationsConfig, baseDir?: string): Channels {
  let dispatcher: ReturnType<typeof httpDispatcher> | null = null;
  const make = { dispatcher: () => (dispatcher ??= httpDispatcher()) };
  const senders = new Map<string, Sender>();
  const secrets: string[] = [];
  for (const [name, channel] of Object.entries(config.channels)) {
    const built = senderFor(name, channel, baseDir, make);
    senders.set(name, built.sender);
    secrets.push(...built.secrets);
  }
  return {
    senders,
    secrets,
    async close() {
      await Promise.all([...senders.values()].map((s) => s.close()));
      await dispatcher?.close();
    },
  };
}
