/** Every channel behind the contract, by name: a new channel is its folder and one line here. */
import type { ChannelAdapter } from './contract.js';
import { smsAdapter } from './sms/sms.adapter.js';
import { slackAdapter } from './slack/slack.adapter.js';
import { emailAdapter } from './email/email.adapter.js';

export const channelAdapters: Record<string, ChannelAdapter> = {
  [smsAdapter.channel]: smsAdapter,
  [slackAdapter.channel]: slackAdapter,
  [emailAdapter.channel]: emailAdapter,
};

/** The adapter of a channel; an unknown channel is a programming error (messages are recorded only by adapters). */
export function adapterOf(channel: string): ChannelAdapter {
  const adapter = channelAdapters[channel];
  if (!adapter) throw new Error(`no adapter for channel "${channel}"`);
  return adapter;
}
