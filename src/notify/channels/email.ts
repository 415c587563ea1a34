/** Email over SMTP (nodemailer): one connection per mail, plain text, every deadline bounded by the channel's timeout. */
import nodemailer from 'nodemailer';
import { emailContent } from '../render.js';
import { DeliveryFailed, scrub } from './sender.js';
import type { Sender } from './sender.js';

/** A mail is given this many channel timeouts in all (connect, greeting, then the exchange): the outbox claim allows for it. */
export const WHOLE_MAIL_TIMEOUTS = 3;

export interface EmailTarget {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  /** Already read from password_file when that was given; never logged. */
  password?: string;
  from: string;
  to: string[];
  timeoutMs: number;
}

export function emailSender(target: EmailTarget): Sender {
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: target.secure,
    ...(target.user ? { auth: { user: target.user, pass: target.password ?? '' } } : {}),
    connectionTimeout: target.timeoutMs,
    greetingTimeout: target.timeoutMs,
    socketTimeout: target.timeoutMs,
  });
  const secrets = target.password ? [target.password] : [];
  return {
    async send(notification, stop) {
      const { subject, text } = emailContent(notification);
      const sent = transport.sendMail({
        from: target.from,
        to: target.to,
        subject,
        text,
        headers: { 'X-Paybatch-Event': notification.event, 'X-Paybatch-Dedupe-Key': notification.dedupe_key },
      });
      // nodemailer cannot be aborted: on a stop, or past the whole mail's deadline (its timeouts are per phase), stop waiting.
      const deadline = AbortSignal.timeout(target.timeoutMs * WHOLE_MAIL_TIMEOUTS);
      const ended = AbortSignal.any([stop, deadline]);
      let onEnd = (): void => {};
      const cutOff = new Promise<never>((_, reject) => {
        onEnd = () => reject(new DeliveryFailed(stop.aborted ? 'interrupted: paybatch is stopping' : `no answer within ${target.timeoutMs * WHOLE_MAIL_TIMEOUTS} ms`));
        if (ended.aborted) onEnd();
        else ended.addEventListener('abort', onEnd, { once: true });
      });
      try {
        await Promise.race([sent, cutOff]);
      } catch (error) {
        if (error instanceof DeliveryFailed) throw error;
        const code = (error as { code?: unknown }).code;
        throw new DeliveryFailed(scrub(`${typeof code === 'string' ? `${code}: ` : ''}${(error as Error).message}`, secrets));
      } finally {
        ended.removeEventListener('abort', onEnd);
        sent.catch(() => {});
      }
    },
    close: async () => transport.close(),
  };
}
