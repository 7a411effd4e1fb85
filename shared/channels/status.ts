/** Which channels are live (their settings set) and which settings each still needs: GET /api/channels, npm run dev's banner. */
import { config } from '../config.js';
import { channelAdapters } from './adapters.js';
import { chatappMissingSettings } from './chatapp/outbound.js';

export interface ChannelStatus {
  channel: string;
  live: boolean;
  missing_settings: string[];
}

/** Settings of the channels outside the contract's text pipeline (voice, chatapp) that are live by their own settings. */
function otherChannels(): ChannelStatus[] {
  const cfg = config();
  const chatapp = chatappMissingSettings();
  const voice = [!cfg.channels.twilio.authToken && 'TWILIO_AUTH_TOKEN'].filter((s): s is string => Boolean(s));
  return [
    { channel: 'chat', live: true, missing_settings: [] },
    { channel: 'voice', live: voice.length === 0, missing_settings: voice },
    { channel: 'chatapp', live: chatapp.length === 0, missing_settings: chatapp },
  ];
}

/** Every channel with its state, in a stable order. */
export function channelStatuses(): ChannelStatus[] {
  const contract = Object.values(channelAdapters).map((a) => {
    const missing = a.missingSettings();
    return { channel: a.channel, live: missing.length === 0, missing_settings: missing };
  });
  return [...otherChannels(), ...contract].sort((a, b) => a.channel.localeCompare(b.channel));
}
