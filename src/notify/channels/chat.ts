/** A chat incoming webhook (Slack-compatible `{"text": ...}`): plain text, nothing signed, no secret in it. */
import type { Dispatcher } from 'undici';
import { chatBody } from '../render.js';
import { postJson } from './http.js';
import type { Sender } from './sender.js';

export function chatSender(target: { url: string; timeoutMs: number }, dispatcher: Dispatcher): Sender {
  const url = new URL(target.url).href;
  return {
    send: (notification, stop) => postJson(dispatcher, url, chatBody(notification), {}, target.timeoutMs, stop),
    close: async () => {},
  };
}
